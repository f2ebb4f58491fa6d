package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/sandox/sandox/schemas"
)

// Stats reads a container's CPU, memory and process use. It blocks for
// about a second: the engine samples CPU twice to compute a rate.
func (c *Client) Stats(ctx context.Context, id string) (schemas.SandboxUsage, error) {
	resp, err := c.api.ContainerStats(ctx, id, false)
	if err != nil {
		return schemas.SandboxUsage{}, notFound(err, "stats of container "+id)
	}
	defer resp.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("decode stats of container %s: %w", id, err)
	}
	u := schemas.SandboxUsage{
		MemoryBytes: int64(s.MemoryStats.Usage - s.MemoryStats.Stats["cache"]),
		PIDs:        int64(s.PidsStats.Current),
		ReadAt:      time.Now().UTC(),
	}
	cpuDelta := float64(s.CPUStats.CPUUsage.TotalUsage) - float64(s.PreCPUStats.CPUUsage.TotalUsage)
	sysDelta := float64(s.CPUStats.SystemUsage) - float64(s.PreCPUStats.SystemUsage)
	if sysDelta > 0 && cpuDelta > 0 {
		cpus := float64(s.CPUStats.OnlineCPUs)
		if cpus == 0 {
			cpus = float64(len(s.CPUStats.CPUUsage.PercpuUsage))
		}
		u.CPUPercent = cpuDelta / sysDelta * cpus * 100 // 100 = one full core
	}
	return u, nil
}
