// Package memruntime is an in-memory container engine for the
// orchestrator's unit tests (Runtime, with the disk pool Disks): it keeps
// images, containers, volumes and events as an engine does where the
// orchestrator can tell, runs each started container's process as a
// function of the test's (SetProcess), and can be told to fail any
// operation (SetFail), to OOM-kill or end a container (OOM, Exit) and to
// break its event stream (BreakEvents).
package memruntime
