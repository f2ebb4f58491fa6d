package schemas

// ProgressSubject is where the progress of a group's long work is
// published (recorded in SANDOX_EVENTS): the image build of one of its
// sandboxes (the orchestrator) and its database population (the data
// service). Clients waiting on a lifecycle command follow it.
func ProgressSubject(groupID string) string { return progressPrefix + groupID }

// ProgressSubjects selects every group's progress.
const ProgressSubjects = progressPrefix + "*"

const progressPrefix = "sandox.evt.progress."

// The phases of long work that report Progress.
const (
	// PhaseImageBuild is the build of a sandbox's image: Done and Total
	// count the build's steps.
	PhaseImageBuild = "image_build"
	// PhasePopulation is a group's database population: Done and Total
	// count its sources.
	PhasePopulation = "population"
)

// Progress says how far one piece of long work has come. Total is 0 when
// it is not known yet; Message says what is being done now (a build step,
// the source being loaded). The last event of a piece of work has Finished
// set, and Error when it failed.
type Progress struct {
	GroupID   string `json:"group_id"`
	SandboxID string `json:"sandbox_id,omitempty"`
	Phase     string `json:"phase"`
	Done      int    `json:"done"`
	Total     int    `json:"total"`
	Message   string `json:"message,omitempty"`
	Finished  bool   `json:"finished,omitempty"`
	Error     string `json:"error,omitempty"`
}
