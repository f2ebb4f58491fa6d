package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
)

// EnsureNetwork creates the bridge network name unless it exists, and
// returns its gateway address (the host's address on that network).
func (c *Client) EnsureNetwork(ctx context.Context, name string, labels map[string]string) (string, error) {
	info, err := c.ensureNetwork(ctx, name, network.CreateOptions{Driver: "bridge", Labels: labels})
	if err != nil {
		return "", err
	}
	for _, cfg := range info.IPAM.Config {
		if cfg.Gateway != "" {
			return cfg.Gateway, nil
		}
	}
	return "", fmt.Errorf("network %s has no gateway address", name)
}

// EnsureIsolatedNetwork creates the bridge network name with
// inter-container traffic off (enable_icc=false) unless it exists: its
// containers reach the outside through the host's NAT, but not each other.
func (c *Client) EnsureIsolatedNetwork(ctx context.Context, name string, labels map[string]string) error {
	_, err := c.ensureNetwork(ctx, name, isolatedNetwork(labels, ""))
	return err
}

// isolatedNetwork is a bridge with inter-container traffic off, on subnet
// when it is not "" (else on one of the engine's default address pools).
func isolatedNetwork(labels map[string]string, subnet string) network.CreateOptions {
	opts := network.CreateOptions{
		Driver:  "bridge",
		Labels:  labels,
		Options: map[string]string{"com.docker.network.bridge.enable_icc": "false"},
	}
	if subnet != "" {
		cfg := network.IPAMConfig{Subnet: subnet}
		// The first address is the host's, as the engine would choose;
		// named, so that the network's inspect shows it.
		if p, err := netip.ParsePrefix(subnet); err == nil {
			cfg.Gateway = p.Masked().Addr().Next().String()
		}
		opts.IPAM = &network.IPAM{Config: []network.IPAMConfig{cfg}}
	}
	return opts
}

// CreateIsolatedNetwork creates the bridge network name, with
// inter-container traffic off, on subnet (a CIDR; "" takes one from the
// engine's default address pools). A name already taken wraps
// ErrNetworkExists; any other refusal, such as a subnet that overlaps
// another network's, is returned as the engine gave it.
func (c *Client) CreateIsolatedNetwork(ctx context.Context, name, subnet string, labels map[string]string) error {
	if _, err := c.api.NetworkCreate(ctx, name, isolatedNetwork(labels, subnet)); err != nil {
		if errdefs.IsConflict(err) {
			return fmt.Errorf("create network %s: %w: %w", name, ErrNetworkExists, err)
		}
		return fmt.Errorf("create network %s on %s: %w", name, subnet, err)
	}
	return nil
}

// ErrNetworkExists reports a network name that is already taken.
var ErrNetworkExists = errors.New("network exists")

// Network is a network as the engine has it.
type Network struct {
	Name   string
	Driver string
	// Subnets are the network's address ranges (CIDRs).
	Subnets []string
	Labels  map[string]string
}

// Networks lists the engine's networks that carry every label in labels
// ("key=value" or "key"; none lists them all).
func (c *Client) Networks(ctx context.Context, labels ...string) ([]Network, error) {
	f := filters.NewArgs()
	for _, l := range labels {
		f.Add("label", l)
	}
	list, err := c.api.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	out := make([]Network, 0, len(list))
	for _, n := range list {
		nw := Network{Name: n.Name, Driver: n.Driver, Labels: n.Labels}
		for _, cfg := range n.IPAM.Config {
			if cfg.Subnet != "" {
				nw.Subnets = append(nw.Subnets, cfg.Subnet)
			}
		}
		out = append(out, nw)
	}
	return out, nil
}

// NetworkMembers returns the names of the containers attached to the
// network name, in any state: a created container that has not started
// yet is attached already (the engine gives it its endpoint when it
// starts). The engine's inspect of the network lists running containers
// only, so this asks the container list.
func (c *Client) NetworkMembers(ctx context.Context, name string) ([]string, error) {
	list, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("network", name))})
	if err != nil {
		return nil, fmt.Errorf("list containers on network %s: %w", name, err)
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		// The filter also matches a network whose id starts with name.
		if _, ok := s.NetworkSettings.Networks[name]; s.NetworkSettings != nil && !ok {
			continue
		}
		if len(s.Names) > 0 {
			out = append(out, strings.TrimPrefix(s.Names[0], "/"))
		}
	}
	return out, nil
}

// ensureNetwork creates the network name with opts unless it exists (or
// another caller creates it first), and returns it as the engine has it.
func (c *Client) ensureNetwork(ctx context.Context, name string, opts network.CreateOptions) (network.Inspect, error) {
	info, err := c.api.NetworkInspect(ctx, name, network.InspectOptions{})
	if isNotFound(err) {
		_, err = c.api.NetworkCreate(ctx, name, opts)
		if err != nil && !errdefs.IsConflict(err) {
			return network.Inspect{}, fmt.Errorf("create network %s: %w", name, err)
		}
		info, err = c.api.NetworkInspect(ctx, name, network.InspectOptions{})
	}
	if err != nil {
		return network.Inspect{}, fmt.Errorf("inspect network %s: %w", name, err)
	}
	return info, nil
}

// RemoveNetwork removes the network; a missing one is not an error.
func (c *Client) RemoveNetwork(ctx context.Context, name string) error {
	if err := c.api.NetworkRemove(ctx, name); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove network %s: %w", name, err)
	}
	return nil
}

func isNotFound(err error) bool { return err != nil && errdefs.IsNotFound(err) }

// publishLocal publishes container ports on 127.0.0.1 only.
func publishLocal(cfg *container.Config, host *container.HostConfig, ports map[string]string) error {
	if len(ports) == 0 {
		return nil
	}
	cfg.ExposedPorts = nat.PortSet{}
	host.PortBindings = nat.PortMap{}
	for cport, hport := range ports {
		p, err := nat.NewPort(splitProto(cport))
		if err != nil {
			return fmt.Errorf("port %s: %w", cport, err)
		}
		if hport == "0" {
			hport = ""
		}
		cfg.ExposedPorts[p] = struct{}{}
		host.PortBindings[p] = []nat.PortBinding{{HostIP: "127.0.0.1", HostPort: hport}}
	}
	return nil
}

func splitProto(port string) (string, string) {
	for i := range port {
		if port[i] == '/' {
			return port[i+1:], port[:i]
		}
	}
	return "tcp", port
}

// ConnectNetwork attaches the container to the network as well; one
// already attached is no error.
func (c *Client) ConnectNetwork(ctx context.Context, networkName, container string) error {
	err := c.api.NetworkConnect(ctx, networkName, container, nil)
	if err != nil && !errdefs.IsConflict(err) && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("connect %s to network %s: %w", container, networkName, err)
	}
	return nil
}
