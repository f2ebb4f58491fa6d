package data

import "context"

// clients holds one database client per address, for the group whose
// database listens there. Docker hands a network's addresses out again:
// when a group ends, the next group's database may get its address. A
// client of the old database knows its collections and constraints, which
// the new one lacks, so a call for another group at a known address closes
// the old client and opens a new one. The cache thus holds at most one
// client per live address. It is not safe for concurrent use; the service
// holds its lock around it.
type clients[C any] struct {
	open   func(ctx context.Context, addr string) (C, error)
	close  func(C)
	byAddr map[string]groupClient[C]
}

type groupClient[C any] struct {
	group  string
	client C
}

func newClients[C any](open func(context.Context, string) (C, error), close func(C)) *clients[C] {
	return &clients[C]{open: open, close: close, byAddr: map[string]groupClient[C]{}}
}

// get returns the client of group's database at addr, connecting once.
func (c *clients[C]) get(ctx context.Context, group, addr string) (C, error) {
	if gc, ok := c.byAddr[addr]; ok {
		if gc.group == group {
			return gc.client, nil
		}
		c.close(gc.client)
		delete(c.byAddr, addr)
	}
	client, err := c.open(ctx, addr)
	if err != nil {
		return client, err
	}
	c.byAddr[addr] = groupClient[C]{group: group, client: client}
	return client, nil
}

// closeAll closes every client.
func (c *clients[C]) closeAll() {
	for addr, gc := range c.byAddr {
		c.close(gc.client)
		delete(c.byAddr, addr)
	}
}
