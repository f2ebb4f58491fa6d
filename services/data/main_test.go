package data

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sandox/sandox/services/data/neo4jtest"
)

// neo is the one Neo4j every test of the package shares.
var neo *neo4jtest.Server

func TestMain(m *testing.M) {
	s, err := neo4jtest.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "neo4j:", err)
		os.Exit(1)
	}
	neo = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}
