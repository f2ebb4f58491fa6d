// Package catalog is the list of sandox's built-in tool families as data:
// each family's name, summary, image needs and whether it binds the
// sandbox's identity, and the selection of families by name. It holds no
// family's code, so the orchestrator, the CLI and the SDKs read it without
// linking the browser driver, the scraper or the terminal's pty; the
// executor opens the families it selects through package builtin, which
// maps each name here to its Open.
//
// Adding a family is adding one entry to Families and one Open to
// builtin (a test there checks the two lists match).
package catalog
