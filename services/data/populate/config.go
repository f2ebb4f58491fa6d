// Package populate loads a group's shared databases from the population
// config named in the group spec (GroupSpec.PopulationConfig): per
// database and namespace, a list of sources (local paths, s3:// keys and
// prefixes, http(s):// URLs) in JSONL, JSON, CSV, Markdown or text for
// Qdrant, and node CSVs, relationship CSVs and Cypher scripts for Neo4j.
// It is idempotent (deterministic ids, merges), batched, reports progress,
// and skips a bad row with its source, line and reason. docs/databases.md
// describes the format.
package populate

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/sandox/sandox/schemas"
)

// Config is a population config.
type Config struct {
	// S3 says how to reach s3:// sources; the environment (AWS_*) and the
	// shared config files fill in what it leaves empty.
	S3 S3Config `yaml:"s3"`
	// Chunk is the default chunking of Markdown and text files.
	Chunk Chunking `yaml:"chunk"`
	// Databases maps a database (qdrant, neo4j) to its namespaces, each
	// with its sources in order.
	Databases map[string]map[string][]Source `yaml:"databases"`
}

// S3Config reaches an S3-compatible store.
type S3Config struct {
	Endpoint string `yaml:"endpoint"`
	Region   string `yaml:"region"`
	// Profile is a named profile of the shared AWS config files.
	Profile string `yaml:"profile"`
	// PathStyle addresses buckets as endpoint/bucket (most S3-compatible
	// servers want it); on by default when Endpoint is set.
	PathStyle *bool `yaml:"path_style"`
}

// Chunking splits Markdown and text into overlapping pieces.
type Chunking struct {
	// Size is the largest chunk in characters (1000 when zero).
	Size int `yaml:"size"`
	// Overlap is how many characters a chunk repeats from the previous one
	// (100 when zero; never Size or more).
	Overlap int `yaml:"overlap"`
}

// Source is one place to load from.
type Source struct {
	// Source is a local path (a file, or a directory read recursively), an
	// s3://bucket/key or s3://bucket/prefix/, or an http(s):// URL.
	Source string `yaml:"source"`
	// Format is jsonl, json, csv, markdown, text (Qdrant), or nodes,
	// relationships, cypher (Neo4j); by the file's extension when empty
	// (.jsonl .json .csv .md .txt; .cypher; a Neo4j .csv needs it).
	Format string `yaml:"format"`
	// Chunk overrides Config.Chunk for this source.
	Chunk *Chunking `yaml:"chunk"`
}

// Parse reads a population config.
func Parse(text string) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, schemas.Errorf(schemas.CodeBadRequest, "population config: %w", err)
	}
	for db, spaces := range c.Databases {
		if db != schemas.DatabaseQdrant && db != schemas.DatabaseNeo4j {
			return c, schemas.Errorf(schemas.CodeBadRequest, "population config: database %q: want qdrant or neo4j", db)
		}
		for ns, sources := range spaces {
			if err := (schemas.DatabaseAccess{{Database: db, Namespace: ns}}).Validate(); err != nil {
				return c, fmt.Errorf("population config: %w", err)
			}
			for i, s := range sources {
				if s.Source == "" {
					return c, schemas.Errorf(schemas.CodeBadRequest, "population config: %s/%s source %d has no source", db, ns, i+1)
				}
			}
		}
	}
	return c, nil
}

func (c Chunking) orDefault() Chunking {
	if c.Size <= 0 {
		c.Size = 1000
	}
	if c.Overlap <= 0 {
		c.Overlap = 100
	}
	if c.Overlap >= c.Size {
		c.Overlap = c.Size / 10
	}
	return c
}
