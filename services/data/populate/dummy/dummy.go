// Package dummy writes sandox's demo data set, deterministically, so that
// no large file is committed: two vector namespaces of documents
// ("handbook", JSONL and Markdown; "research", CSV), a small knowledge
// graph ("kg": node and relationship CSVs and a Cypher script), and the
// population config that loads them (population.yaml).
package dummy

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Documents is how many documents each vector namespace gets from its
// JSONL or CSV file.
const Documents = 150

var (
	topics   = []string{"onboarding", "security", "billing", "deployment", "testing", "networking", "storage", "observability"}
	subjects = []string{"the team", "a new engineer", "the service", "the pipeline", "the cluster", "the customer", "the on-call rotation", "the database"}
	verbs    = []string{"reviews", "configures", "monitors", "documents", "migrates", "restarts", "audits", "scales"}
	objects  = []string{"access keys", "release notes", "backup schedules", "alert rules", "firewall policies", "invoices", "load balancers", "test fixtures"}
)

func sentence(r *rand.Rand) string {
	subject := subjects[r.IntN(len(subjects))]
	return fmt.Sprintf("%s %s %s every %s.", strings.ToUpper(subject[:1])+subject[1:],
		verbs[r.IntN(len(verbs))], objects[r.IntN(len(objects))], []string{"week", "sprint", "quarter", "release"}[r.IntN(4)])
}

// Write writes the data set into dir and returns the config's path.
func Write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	r := rand.New(rand.NewPCG(11, 17))

	// handbook: JSONL. Document hb-42 holds a distinctive term.
	var jl strings.Builder
	for i := range Documents {
		topic := topics[i%len(topics)]
		text := fmt.Sprintf("Handbook entry %d on %s. %s %s", i, topic, sentence(r), sentence(r))
		if i == 42 {
			topic, text = "security", "Handbook entry 42 on security. Rotate the zephyrquartz credentials before every audit."
		}
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("hb-%d", i), "text": text,
			"metadata": map[string]any{"topic": topic, "year": int64(2020 + i%6)}})
		jl.Write(line)
		jl.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "handbook.jsonl"), []byte(jl.String()), 0o644); err != nil {
		return "", err
	}
	md := "# Incident process\n\nWhen an alert fires, the on-call engineer acknowledges it within five minutes.\n\n" +
		"## Escalation\n\nIf the incident lasts longer than thirty minutes, page the incident commander.\n\n" +
		"## Review\n\nEvery incident gets a blameless review within a week.\n"
	if err := os.WriteFile(filepath.Join(dir, "incidents.md"), []byte(md), 0o644); err != nil {
		return "", err
	}

	// research: CSV.
	f, err := os.Create(filepath.Join(dir, "research.csv"))
	if err != nil {
		return "", err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"id", "text", "field", "cited"})
	fields := []string{"databases", "distributed systems", "machine learning", "compilers", "security"}
	for i := range Documents {
		text := fmt.Sprintf("Paper %d in %s: %s", i, fields[i%len(fields)], sentence(r))
		if i == 7 {
			text = "Paper 7 in databases: hybrid retrieval with the bellwether fusion of sparse and dense rankings."
		}
		_ = w.Write([]string{fmt.Sprintf("paper-%d", i), text, fields[i%len(fields)], fmt.Sprint(r.IntN(500))})
	}
	w.Flush()
	if err := f.Close(); err != nil {
		return "", err
	}

	// kg: people, projects and skills.
	nodes := "id,labels,name\n" +
		"ada,Person,Ada Lovelace\nalan,Person,Alan Turing\ngrace,Person,Grace Hopper\nedsger,Person,Edsger Dijkstra\n" +
		"engine,Project,Analytical Engine\nenigma,Project,Enigma\ncobol,Project,COBOL\nsp,Project,Shortest paths\n"
	rels := "from,to,type,since\n" +
		"ada,engine,WORKED_ON,1842\nalan,enigma,WORKED_ON,1939\ngrace,cobol,WORKED_ON,1959\nedsger,sp,WORKED_ON,1956\n" +
		"ada,alan,INSPIRED,1950\nalan,grace,KNOWS,1950\ngrace,edsger,KNOWS,1970\n"
	cypher := "// Skills, merged so that loading again changes nothing.\n" +
		"MERGE (s:Skill {id: 'math', name: 'Mathematics'});\n" +
		"MERGE (s:Skill {id: 'prog', name: 'Programming'});\n" +
		"MATCH (p:Person), (s:Skill {id: 'math'}) WHERE p.id IN ['ada', 'alan', 'edsger']\n  MERGE (p)-[:HAS_SKILL]->(s);\n" +
		"MATCH (p:Person), (s:Skill {id: 'prog'}) WHERE p.id IN ['grace', 'edsger']\n  MERGE (p)-[:HAS_SKILL]->(s);\n"
	for name, body := range map[string]string{"kg-nodes.csv": nodes, "kg-rels.csv": rels, "kg.cypher": cypher} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	cfg := `# The demo's population config (services/data/populate/dummy).
chunk: {size: 400, overlap: 40}
databases:
  qdrant:
    handbook:
      - source: handbook.jsonl
      - source: incidents.md
    research:
      - source: research.csv
  neo4j:
    kg:
      - source: kg-nodes.csv
        format: nodes
      - source: kg-rels.csv
        format: relationships
      - source: kg.cypher
`
	path := filepath.Join(dir, "population.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}
