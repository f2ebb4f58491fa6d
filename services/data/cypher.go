package data

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrCypherRefused means a free-form Cypher query was refused before it
// ran: it could reach outside its namespace, or it uses a construct the
// service does not allow.
var ErrCypherRefused = errors.New("query refused")

// nsLabel is the hidden label every node of namespace ns carries, besides
// its ns property. A free-form query never names it (nor any NS_ label);
// the service adds it.
func nsLabel(ns string) string { return "`NS_" + ns + "`" }

// nodeLabel is the label every node the service manages carries; the
// uniqueness constraint on (ns, id) is on it.
const nodeLabel = "SandoxNode"

// refusedWords may not appear, as words outside string literals, in a
// free-form query: procedures and subquery calls (CALL), file and URL
// access (LOAD CSV), another database (USE), administration, and the
// service's own bookkeeping (the ns property, the NS_ and SandoxNode
// labels).
var refusedWords = map[string]string{
	"call":       "procedures and CALL subqueries are not allowed",
	"load":       "LOAD CSV is not allowed",
	"use":        "USE is not allowed: the namespace is the only database",
	"show":       "SHOW is not allowed",
	"drop":       "DROP is not allowed",
	"index":      "index administration is not allowed",
	"constraint": "constraint administration is not allowed",
	"terminate":  "TERMINATE is not allowed",
	"ns":         "the ns property is the service's own",
	"sandoxnode": "the SandoxNode label is the service's own",
	"elementid":  "lookups by element id are not allowed",
	"id":         "", // checked below: id( ) the function, not the property .id
}

// confine checks a free-form query and returns it rewritten for namespace
// ns: every label written in a node pattern, (n:Person), gains the
// namespace label, (n:Person:`NS_docs`). The rewrite is a convenience
// that lets the planner start from the namespace; what makes the query
// safe is checkPlan, run on the rewritten query's plan, which refuses any
// plan that finds a node other than through the namespace label.
func confine(query, ns string) (string, error) {
	toks, err := lex(query)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	var stack []byte
	for i, t := range toks {
		switch t.kind {
		case tokWord:
			lw := strings.ToLower(t.text)
			if strings.HasPrefix(lw, "ns_") {
				return "", fmt.Errorf("%w: the NS_ labels are the service's own", ErrCypherRefused)
			}
			if why, ok := refusedWords[lw]; ok {
				if lw == "id" {
					// .id is the node's id property; id( ) the function.
					if next(toks, i) == "(" && prev(toks, i) != "." {
						return "", fmt.Errorf("%w: lookups by internal id are not allowed", ErrCypherRefused)
					}
				} else if prev(toks, i) != "." || lw == "ns" {
					return "", fmt.Errorf("%w: %s", ErrCypherRefused, why)
				}
			}
			if strings.Contains(lw, "apoc") || lw == "dbms" || lw == "db" {
				return "", fmt.Errorf("%w: procedures and system functions are not allowed", ErrCypherRefused)
			}
			out.WriteString(t.text)
			// A label in a node pattern: ( var : Label
			if i >= 2 && toks[i-1].text == ":" && len(stack) > 0 && stack[len(stack)-1] == '(' && labelPosition(toks, i-1) {
				out.WriteString(":" + nsLabel(ns))
			}
		case tokPunct:
			switch t.text {
			case "(", "[", "{":
				stack = append(stack, t.text[0])
			case ")", "]", "}":
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
			out.WriteString(t.text)
		default:
			out.WriteString(t.text)
		}
	}
	return out.String(), nil
}

// labelPosition reports whether the colon at toks[c] introduces a label:
// it follows the opening parenthesis or a variable right after it, or
// another label.
func labelPosition(toks []token, c int) bool {
	p := c - 1
	for p >= 0 && toks[p].kind == tokSpace {
		p--
	}
	if p < 0 {
		return false
	}
	if toks[p].text == "(" {
		return true
	}
	if toks[p].kind != tokWord {
		return false
	}
	q := p - 1
	for q >= 0 && toks[q].kind == tokSpace {
		q--
	}
	return q >= 0 && (toks[q].text == "(" || toks[q].text == ":")
}

type tokKind int

const (
	tokWord tokKind = iota
	tokPunct
	tokString
	tokSpace
)

type token struct {
	kind tokKind
	text string
}

// lex splits a query into words, punctuation, string literals and space.
// Comments and backquoted names are refused: they could hide words from
// the checks above.
func lex(q string) ([]token, error) {
	var toks []token
	rs := []rune(q)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			j := i
			for j < len(rs) && unicode.IsSpace(rs[j]) {
				j++
			}
			toks = append(toks, token{tokSpace, string(rs[i:j])})
			i = j
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || r == '$':
			j := i + 1
			for j < len(rs) && (rs[j] == '_' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			toks = append(toks, token{tokWord, string(rs[i:j])})
			i = j
		case r == '\'' || r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' {
					j++
				}
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("%w: unterminated string", ErrCypherRefused)
			}
			toks = append(toks, token{tokString, string(rs[i : j+1])})
			i = j + 1
		case r == '`':
			return nil, fmt.Errorf("%w: backquoted names are not allowed", ErrCypherRefused)
		case r == '/' && i+1 < len(rs) && (rs[i+1] == '/' || rs[i+1] == '*'):
			return nil, fmt.Errorf("%w: comments are not allowed", ErrCypherRefused)
		case r == '\\' || r == ';':
			return nil, fmt.Errorf("%w: %q is not allowed", ErrCypherRefused, string(r))
		default:
			toks = append(toks, token{tokPunct, string(r)})
			i++
		}
	}
	return toks, nil
}

// next and prev return the text of the token after and before toks[i],
// skipping space; "" at either end.
func next(toks []token, i int) string {
	for j := i + 1; j < len(toks); j++ {
		if toks[j].kind != tokSpace {
			return toks[j].text
		}
	}
	return ""
}

func prev(toks []token, i int) string {
	for j := i - 1; j >= 0; j-- {
		if toks[j].kind != tokSpace {
			return toks[j].text
		}
	}
	return ""
}
