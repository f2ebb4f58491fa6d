package data

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data/populate"
)

// unknownLabel stands for a database or operation the service does not
// know: the request names it, and would otherwise add series without end.
const unknownLabel = "(unknown)"

// listOperation is the operation label of a request for the grants.
const listOperation = "list"

// maxPopulationGroups is how many groups' population gauges the service
// keeps; the oldest population's go first.
const maxPopulationGroups = 100

// operations are the operations of each database, as their labels.
var operations = map[string][]string{
	schemas.DatabaseNeo4j: {schemas.GraphReadQuery, schemas.GraphWriteQuery, schemas.GraphAddNode,
		schemas.GraphAddRelationship, schemas.GraphNeighbours, schemas.GraphShortestPath},
	schemas.DatabaseQdrant: {schemas.VectorSearch, schemas.VectorGet, schemas.VectorUpsert, schemas.VectorDelete},
}

// measures are the metrics the data service measures itself, in a
// registry of its own that the metrics exporter asks for
// (services/metrics/report). They are safe for concurrent use.
type measures struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	populations *prometheus.CounterVec
	popSources  *prometheus.GaugeVec
	popRows     *prometheus.GaugeVec
	popBad      *prometheus.GaugeVec

	mu     sync.Mutex
	groups []string // the groups with population gauges, oldest population first
}

func newMeasures() *measures {
	m := &measures{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_data_requests_total",
			Help: "Database requests the data service answered, by database, operation and code (ok, or the error code)."},
			[]string{"database", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandox_data_request_duration_seconds",
			Help: "How long the data service took to answer a database request, by database and operation.", Buckets: prometheus.DefBuckets},
			[]string{"database", "operation"}),
		populations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_data_populations_total",
			Help: "Group populations the data service ran to their end, by code (ok, or the error code that stopped one)."}, []string{"code"}),
		popSources: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sandox_data_population_sources",
			Help: "The sources of a group's latest population, by group, database and state (total, done)."}, []string{"group", "database", "state"}),
		popRows: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sandox_data_population_loaded",
			Help: "Documents, nodes, relationships or statements a group's latest population wrote so far, by group and database."}, []string{"group", "database"}),
		popBad: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sandox_data_population_bad_rows",
			Help: "Rows a group's latest population skipped so far, by group and database."}, []string{"group", "database"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.populations, m.popSources, m.popRows, m.popBad)
	return m
}

// request counts one answered request received on subject with payload.
func (m *measures) request(subject string, payload []byte, reply schemas.DatabaseReply, took time.Duration) {
	database, operation := unknownLabel, unknownLabel
	if call, err := schemas.ParseDatabaseSubject(subject); err == nil {
		if _, ok := operations[call.Database]; ok {
			database = call.Database
		}
		var req schemas.DatabaseRequest
		switch {
		case call.Op == "":
			operation = listOperation
		case json.Unmarshal(payload, &req) == nil && slices.Contains(operations[database], req.Op):
			operation = req.Op
		}
	}
	code := "ok"
	if reply.Error != nil {
		code = string(reply.Error.Code)
	}
	m.requests.WithLabelValues(database, operation, code).Inc()
	m.duration.WithLabelValues(database, operation).Observe(took.Seconds())
}

// populationRun follows one population of a group into the gauges. Its
// methods are called by the population's goroutine only.
type populationRun struct {
	m       *measures
	group   string
	total   int                                   // sources in the config
	sources map[[3]string]schemas.PopulationEvent // by database, namespace, source
}

// population starts the gauges of group's population of cfg: every
// source to do, none done. The gauges of the group's previous
// population go, and those of the oldest group when there are too many.
func (m *measures) population(group string, cfg populate.Config) *populationRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(group)
	m.groups = append(m.groups, group)
	if len(m.groups) > maxPopulationGroups {
		m.forget(m.groups[0])
	}
	run := &populationRun{m: m, group: group, sources: map[[3]string]schemas.PopulationEvent{}}
	for db, spaces := range cfg.Databases {
		total := 0
		for _, srcs := range spaces {
			total += len(srcs)
		}
		run.total += total
		m.popSources.WithLabelValues(group, db, "total").Set(float64(total))
		m.popSources.WithLabelValues(group, db, "done").Set(0)
		m.popRows.WithLabelValues(group, db).Set(0)
		m.popBad.WithLabelValues(group, db).Set(0)
	}
	return run
}

// forget removes group's population gauges; m.mu is held.
func (m *measures) forget(group string) {
	i := slices.Index(m.groups, group)
	if i < 0 {
		return
	}
	m.groups = slices.Delete(m.groups, i, i+1)
	for _, v := range []*prometheus.GaugeVec{m.popSources, m.popRows, m.popBad} {
		v.DeletePartialMatch(prometheus.Labels{"group": group})
	}
}

// progress takes one event of the population (populate.Runner.Progress).
func (r *populationRun) progress(ev schemas.PopulationEvent) {
	r.sources[[3]string{ev.Database, ev.Namespace, ev.Source}] = ev
	done, rows, bad := 0, 0, 0
	for key, s := range r.sources {
		if key[0] != ev.Database {
			continue
		}
		rows += s.Loaded
		bad += len(s.Bad)
		if s.Done {
			done++
		}
	}
	r.m.popSources.WithLabelValues(r.group, ev.Database, "done").Set(float64(done))
	r.m.popRows.WithLabelValues(r.group, ev.Database).Set(float64(rows))
	r.m.popBad.WithLabelValues(r.group, ev.Database).Set(float64(bad))
}

// status is the population's progress after ev: sources done of the
// config's, and what ev says.
func (r *populationRun) status(ev schemas.PopulationEvent) schemas.Progress {
	done := 0
	for _, s := range r.sources {
		if s.Done {
			done++
		}
	}
	return schemas.Progress{GroupID: r.group, Phase: schemas.PhasePopulation, Done: done, Total: r.total,
		Message: fmt.Sprintf("%s %s: %s, %d loaded, %d bad", ev.Database, ev.Namespace, ev.Source, ev.Loaded, len(ev.Bad))}
}

// finished is the population's last progress: every source it got to,
// and the error that stopped it.
func (r *populationRun) finished(err *schemas.Error) schemas.Progress {
	p := r.status(schemas.PopulationEvent{})
	p.Finished, p.Message = true, "populated"
	if err != nil {
		p.Error, p.Message = err.Message, "failed"
	}
	return p
}

// end counts the population's end: ok, or the code of the error that
// stopped it.
func (r *populationRun) end(err *schemas.Error) {
	code := "ok"
	if err != nil {
		code = string(err.Code)
	}
	r.m.populations.WithLabelValues(code).Inc()
}
