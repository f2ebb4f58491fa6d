package catalog

// The built-in families' names: the part before the dot in
// "filesystem_tools.read_file", and the name users select a family by
// ("filesystem_tools" or "filesystem_tools.py").
const (
	Terminal   = "terminal_tools"
	Filesystem = "filesystem_tools"
	Web        = "web_tools"
	Database   = "database_tools"
)

// Family is a built-in tool family as data: what the orchestrator, the CLI
// and the executor need to know about it besides its code.
type Family struct {
	// Name is the family's name (Terminal, Filesystem, …).
	Name string
	// Summary says in one line what the family offers, for docs and errors.
	Summary string
	// Image is what a sandbox image needs for the family beyond the default
	// sandbox image.
	Image ImageNeeds
	// NeedsIdentity says the family's Open binds the sandbox's id or group:
	// a pooled executor opens the family only once claimed, the others
	// while it waits (executor.PreopenTools).
	NeedsIdentity bool
}

// List is a list of families, in the order the executor opens them.
type List []Family

// Families returns every built-in family, in the order the executor opens
// them. The caller may modify the returned list.
func Families() List {
	return List{
		{
			Name:    Terminal,
			Summary: "persistent bash sessions, long-running commands, uv and Python",
			// bash, python3 and uv are in the default sandbox image.
		},
		{
			Name:    Filesystem,
			Summary: "read, write, edit, move, copy, delete, list, find and search files in the workspace",
		},
		{
			Name:    Web,
			Summary: "scrape a site to markdown, web search, browser automation",
			Image:   ImageNeeds{Apt: []string{"chromium", "fonts-liberation"}},
			// Its searches go to the sandbox's own search subject.
			NeedsIdentity: true,
		},
		{
			Name:    Database,
			Summary: "the group's shared databases: hybrid vector/keyword search (Qdrant) and a graph (Neo4j), per granted namespace",
			// Its calls name the sandbox, whose grants the data service checks.
			NeedsIdentity: true,
		},
	}
}

// Default are the families a sandbox gets when neither it nor its group
// names one.
var Default = []string{Filesystem, Terminal}
