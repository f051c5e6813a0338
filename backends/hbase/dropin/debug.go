package dropin

import (
	"context"
	"fmt"

	"github.com/tsuna/gohbase"
)

// CacheRegions loads every region of table into the region cache of the gohbase client underneath,
// as gohbase's CacheRegions does. A salted table is one HBase table holding every bucket, so its
// regions are the logical table's.
func (c *Client) CacheRegions(table []byte) error {
	ctx := context.Background() // gohbase's CacheRegions takes no context either
	if err := c.begin(ctx); err != nil {
		return err
	}
	return c.asGohbase(ctx, c.inner.CacheRegions(table))
}

// MarshalJSON is gohbase.DebugState of the gohbase client underneath (a NewClient client connects
// first), so that gohbase.DebugState(c) shows the region and connection caches that c uses.
func (c *Client) MarshalJSON() ([]byte, error) {
	if err := c.begin(context.Background()); err != nil {
		return nil, err
	}
	b, err := gohbase.DebugState(c.inner)
	if err != nil {
		return nil, fmt.Errorf("dropin: debug state: %w", err)
	}
	return b, nil
}
