package executor

import (
	"regexp"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// batchIDPattern is a batch id that can end a subject: the observation
// copy of a batch is published under it.
var batchIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })

// takeBatch gives a batch without a Sandox-Batch-Id header a fresh one, so
// that its record and its observations can be found together, and records
// the batch as received on schemas.BatchRecordSubject: the payload as sent,
// the sender's headers, and Sandox-Reply naming the reply subject. The
// events stream does not capture the actions subject (a stream there
// would answer for a missing executor), so this record is the audit trail
// of the request. A record that cannot be published is logged.
func (s *Server) takeBatch(m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	if m.Header.Get(schemas.HeaderBatchID) == "" {
		m.Header.Set(schemas.HeaderBatchID, uuid.NewString())
	}
	rec := nats.NewMsg(schemas.BatchRecordSubject(s.cfg.SandboxID))
	for k, v := range m.Header {
		rec.Header[k] = v
	}
	rec.Header.Set(schemas.HeaderReply, m.Reply)
	rec.Data = m.Data
	if err := s.nc.PublishMsg(rec); err != nil {
		s.log.Warn("record action batch", "batch", m.Header.Get(schemas.HeaderBatchID), "err", err)
	}
}

// recordObservations keeps the answer to a batch whose reply subject the
// events stream does not capture (an _INBOX of `nats request`): it
// publishes a copy on schemas.ObservationSubject. An answer sent to a
// schemas.ObservationSubjectPrefix subject is recorded as it is sent.
func (s *Server) recordObservations(m *nats.Msg, batchID string, data []byte) {
	if strings.HasPrefix(m.Reply, schemas.ObservationSubjectPrefix) {
		return
	}
	if !batchIDPattern().MatchString(batchID) {
		s.log.Warn("observations not recorded: the batch id cannot end a subject", "batch", batchID)
		return
	}
	if err := s.nc.Publish(schemas.ObservationSubject(s.cfg.SandboxID, batchID), data); err != nil {
		s.log.Warn("record observations", "batch", batchID, "err", err)
	}
}
