// Package docker adapts the Docker Engine API to what sandox needs: build
// images from generated build contexts, run sandbox containers with limits
// and labels, and clean them up. It is the only package that imports the
// Docker client.
package docker

import (
	"context"
	"errors"
	"fmt"

	"github.com/docker/docker/client"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// ErrEngineUnavailable reports that no Docker engine answers.
var ErrEngineUnavailable = errors.New("no Docker engine answers")

// Client talks to one Docker engine. It is safe for concurrent use.
type Client struct {
	api *client.Client
}

// New connects to the engine named by the environment (DOCKER_HOST, or the
// local socket), negotiating the API version so that old engines (API 1.41)
// and new ones both work. It checks that the engine answers; the error wraps
// ErrEngineUnavailable and says how to start one.
func New(ctx context.Context) (*Client, error) {
	api, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	c := &Client{api: api}
	if err := c.Ping(ctx); err != nil {
		api.Close()
		return nil, err
	}
	return c, nil
}

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.api.Ping(ctx); err != nil {
		return fmt.Errorf("%w at %s: %w (start it with build/scripts/engine.sh, or install Docker)", ErrEngineUnavailable, c.api.DaemonHost(), err)
	}
	return nil
}

// Close releases the client's connections.
func (c *Client) Close() error { return c.api.Close() }

// Host describes the engine's machine.
type Host struct {
	// ID is the engine's unique id.
	ID          string
	CPUs        int
	MemoryBytes int64
	DockerRoot  string
	Version     string
	APIVersion  string
	CgroupV     string
}

// Host reads the engine's view of its machine.
func (c *Client) Host(ctx context.Context) (Host, error) {
	info, err := c.api.Info(ctx)
	if err != nil {
		return Host{}, fmt.Errorf("docker info: %w", err)
	}
	return Host{
		ID:          info.ID,
		CPUs:        info.NCPU,
		MemoryBytes: info.MemTotal,
		DockerRoot:  info.DockerRootDir,
		Version:     info.ServerVersion,
		APIVersion:  c.api.ClientVersion(),
		CgroupV:     info.CgroupVersion,
	}, nil
}

func notFound(err error, what string) error {
	if client.IsErrNotFound(err) {
		return fmt.Errorf("%s: %w", what, runtime.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}
