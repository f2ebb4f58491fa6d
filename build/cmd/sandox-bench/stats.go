package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// samples are the times one benchmark item took, one per run.
type samples []time.Duration

// pct returns the p-th percentile (nearest rank) of s, or 0 when s is
// empty.
func (s samples) pct(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// table is the one table the bench command prints: a row per measured item,
// each with its count and percentiles, or a figure that is not a time.
type table struct {
	rows []row
}

type row struct {
	section, item string
	n             int
	p50, p95, p99 string
	note          string
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// times adds a row of timed samples.
func (t *table) times(section, item string, s samples, note string) {
	t.rows = append(t.rows, row{section, item, len(s), ms(s.pct(50)), ms(s.pct(95)), ms(s.pct(99)), note})
}

// sizes adds a row of sizes in KiB (kept as samples to reuse pct), shown in
// MiB.
func (t *table) sizes(section, item string, s samples, note string) {
	mib := func(p float64) string { return fmt.Sprintf("%.1f", float64(s.pct(p))/1024) }
	t.rows = append(t.rows, row{section, item, len(s), mib(50), mib(95), mib(99), note})
}

// figure adds a row with one figure that is not a latency.
func (t *table) figure(section, item string, n int, value, note string) {
	t.rows = append(t.rows, row{section, item, n, value, "", "", note})
}

// print writes the table as Markdown.
func (t *table) print(w io.Writer) {
	fmt.Fprintln(w, "| section | item | n | p50 ms (or figure) | p95 ms | p99 ms | note |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|")
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s |\n", r.section, r.item, r.n, r.p50, r.p95, r.p99, strings.ReplaceAll(r.note, "|", "/"))
	}
}
