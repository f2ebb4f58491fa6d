package web

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-rod/rod"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Field is one named value of a record: a sub-selector inside the record's
// element and what to read from it.
type Field struct {
	Selector  string `json:"selector,omitempty" jsonschema:"description=CSS selector inside the record's element. Empty: the element itself."`
	XPath     string `json:"xpath,omitempty" jsonschema:"description=XPath relative to the record's element (start it with a dot), instead of selector."`
	Attribute string `json:"attribute,omitempty" jsonschema:"description=Attribute to read (for example href). Default: the element's visible text."`
}

type extractArgs struct {
	target
	Attribute      string           `json:"attribute,omitempty" jsonschema:"description=Attribute to read (for example href). Default: the visible text."`
	All            bool             `json:"all,omitempty" jsonschema:"description=Return a list with a value for every matching element instead of the first one's."`
	Fields         map[string]Field `json:"fields,omitempty" jsonschema:"description=Named sub-selectors: each matching element becomes a record (a JSON object) with one value per field; a field that matches nothing is null."`
	TimeoutSeconds int              `json:"timeout_seconds,omitempty" jsonschema:"minimum=1,maximum=300,description=How long to wait for the first matching element. Default: 10."`
}

// extractJS reads values out of the page. It runs in the page with the
// arguments (selector, xpath, attribute, all, fields).
const extractJS = `function(selector, xpath, attribute, all, fields) {
	const byXPath = (root, xp) => {
		const it = document.evaluate(xp, root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
		const out = [];
		for (let i = 0; i < it.snapshotLength; i++) out.push(it.snapshotItem(i));
		return out;
	};
	const find = (root, sel, xp) => xp ? byXPath(root, xp) : sel ? Array.from(root.querySelectorAll(sel)) : [root];
	const read = (node, attr) => {
		if (!node) return null;
		if (attr) return node.getAttribute ? node.getAttribute(attr) : null;
		const text = node.innerText !== undefined ? node.innerText : node.textContent;
		return (text || "").trim();
	};
	const nodes = find(document, selector, xpath);
	if (fields) {
		return nodes.map(n => {
			const rec = {};
			for (const [name, f] of Object.entries(fields)) {
				rec[name] = read(find(n, f.selector, f.xpath)[0], f.attribute);
			}
			return rec;
		});
	}
	if (all) return nodes.map(n => read(n, attribute));
	return read(nodes[0], attribute);
}`

func (w *Web) browserExtract() tools.Tool {
	return tools.New(Family, "browser_extract",
		"Read fields of the browser's current page into JSON, by CSS selector or XPath: one value (the first match's text or attribute), "+
			"a list (all), or a list of records from a repeated element with named sub-selectors (fields). Waits for the first match. "+
			"Open the page with browser_open first.",
		func(ctx context.Context, a extractArgs) (tools.Result, error) {
			if err := a.check(); err != nil {
				return tools.Result{}, err
			}
			for name, f := range a.Fields {
				if f.Selector != "" && f.XPath != "" {
					return tools.Result{}, fmt.Errorf("field %q: give selector or xpath, not both: %w", name, schemas.CodeInvalidArgs)
				}
			}
			timeout := seconds(a.TimeoutSeconds, 10)
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var value json.RawMessage
			err := w.browser.do(ctx, func(p *rod.Page) error {
				if _, err := a.find(p, timeout.String()); err != nil {
					return err
				}
				var fields any
				if len(a.Fields) > 0 {
					fields = a.Fields
				}
				res, err := p.Eval(extractJS, a.Selector, a.XPath, a.Attribute, a.All, fields)
				if err != nil {
					return browserError("extract "+a.target.String(), timeout, err)
				}
				value = json.RawMessage(res.Value.JSON("", ""))
				return nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: string(value), Return: value}, nil
		})
}
