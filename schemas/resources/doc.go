// Package resources is the compute-resource model of sandox: the virtual
// hardware of a sandbox (CPU, memory, disk, memory bandwidth, processes and
// the cores it may run on), given in absolute amounts or as percentages of
// the host.
//
// A sandbox's resources go through four steps, all pure functions of their
// inputs:
//
//   - [Merge] lays the sandbox's own [schemas.ComputeResources] over its
//     group's defaults, field by field.
//   - [Parse] checks the syntax and turns the strings into a [Request].
//   - [Resolve] turns the Request into absolute limits on one [Host], as a
//     [schemas.ResolvedResources].
//   - [Ledger.Admit] refuses a sandbox whose limits do not fit what is left
//     of the host, and records those that do.
//
// The package probes nothing and enforces nothing: the caller measures the
// Host and hands the resolved limits to the container runtime. Every error
// is a *[schemas.Error] whose code says whose fault it is: CodeBadRequest for
// a request that is wrong anywhere, CodeUnsupported for one this host cannot
// enforce, CodeResourceExhausted for one that does not fit.
//
// The functions are safe for concurrent use; a Ledger is a plain value and
// is not.
package resources
