// Package limits watches, from inside a sandbox, the limits the sandbox runs
// under: the kernel's count of processes killed for memory and of forks
// refused (read from the sandbox's cgroup, v1 or v2), and how full the
// workspace's disk is. A Watcher turns what changed since it last looked
// into schemas.LimitHit values, which the executor attaches to observations,
// and reads the workspace's disk use for the sandbox's stats.
package limits
