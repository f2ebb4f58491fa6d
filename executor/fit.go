package executor

import (
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// fitPayload encodes res, and when it exceeds max bytes cuts the largest
// stdout and stderr fields until it fits, marking each cut, so that a reply
// is never lost to the server's payload limit.
func fitPayload(res schemas.BatchResult, max int64) ([]byte, error) {
	data, err := json.Marshal(res)
	if err != nil || int64(len(data)) <= max || len(res.Observations) == 0 {
		return data, err
	}
	// Share what is left after the envelope evenly between the text fields.
	budget := max / int64(2*len(res.Observations)+1)
	obs := make([]schemas.Observation, len(res.Observations))
	copy(obs, res.Observations)
	for i := range obs {
		obs[i].Stdout = cut(obs[i].Stdout, budget)
		obs[i].Stderr = cut(obs[i].Stderr, budget)
		if int64(len(obs[i].Return)) > budget {
			obs[i].Return = nil
			obs[i].Stderr += "\n[sandox: the return value was dropped: it does not fit in one reply]"
		}
	}
	res.Observations = obs
	return json.Marshal(res)
}

func cut(s string, budget int64) string {
	// JSON escaping can double a byte's size; leave room for it.
	keep := budget/2 - 128
	if int64(len(s)) <= keep || keep < 0 {
		return s
	}
	return s[:keep] + fmt.Sprintf("\n[sandox: %d bytes cut: the reply exceeds the message size limit; read the output in smaller parts]", int64(len(s))-keep)
}
