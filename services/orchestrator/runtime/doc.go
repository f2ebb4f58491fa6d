// Package runtime declares the container engine as the orchestrator needs
// it, split by concern (Images, Containers, ContainerReader, Volumes,
// EventSource, HostReader, all embedded in Runtime), the optional abilities
// only some engines have (EgressRuntime, DatabaseRuntime, ResourceUpdater,
// ImageStore), gathered with a Runtime in Engine, and the labels the
// orchestrator puts on what it creates. internal/docker implements it; the
// orchestrator's parts take only the interfaces they use.
package runtime
