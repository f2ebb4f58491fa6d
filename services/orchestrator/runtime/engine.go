package runtime

// Engine is a container engine as a worker is given it: the Runtime every
// worker drives, and the optional abilities only some engines have, each
// handed to the part of the worker that uses it. A nil ability is one the
// engine lacks; the part then does without, as each field says. Nothing
// asks a Runtime for an ability by type assertion.
type Engine struct {
	// Runtime is what every worker drives; nil only for a worker that
	// never touches containers (some unit tests).
	Runtime Runtime
	// Egress spreads sandboxes with open egress over several bridges;
	// without it every such sandbox joins the one egress network.
	Egress EgressRuntime
	// Databases runs group databases; without it a group that asks for
	// one is refused as unsupported.
	Databases DatabaseRuntime
	// Updater changes the limits of a running container; without it a
	// claim from a pool is served only with the pool's own resources.
	Updater ResourceUpdater
	// ImageStore lists and removes images; without it images are never
	// collected.
	ImageStore ImageStore
	// Freezer pauses and resumes sandboxes; without it pause_sandbox is
	// refused as unsupported.
	Freezer Freezer
	// Archiver copies files out of and into containers; without it
	// checkpoints, rollback and fork are refused as unsupported.
	Archiver Archiver
}
