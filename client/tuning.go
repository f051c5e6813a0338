package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

// Tuning is backends.Tuning: a table's reserved throughput and TTL.
type Tuning = backends.Tuning

// TuneTable changes a table's reserved throughput and TTL on a store that has them (Tablestore);
// other stores fail with backends.ErrNotTunable before anything is sent.
func (c *Client) TuneTable(ctx context.Context, name string, t Tuning) error {
	tuner, ok := c.core.Backend.(backends.Tuner)
	if !ok {
		return fmt.Errorf("tune table %q: %w", name, backends.ErrNotTunable)
	}
	if err := tuner.Tune(ctx, name, t); err != nil {
		return fmt.Errorf("tune table %q: %w", name, err)
	}
	return nil
}
