package compare

import (
	"bytes"
	"cmp"

	"github.com/brine-kv/brine/client"
)

// cmpCells orders cells by family, qualifier, newest first: the canonical order.
func cmpCells(x, y client.Cell) int {
	return cmp.Or(cmp.Compare(x.Family, y.Family), cmp.Compare(x.Qualifier, y.Qualifier), cmp.Compare(y.Timestamp, x.Timestamp))
}

// CellDiff returns the cells of row a that row b has not, and those of b that a has not, each in
// canonical order (family, qualifier, newest first): exactly what makes the two rows differ. A cell
// is its family, qualifier, timestamp and value; two cells of one column and timestamp with other
// values are one in each list.
func CellDiff(a, b []client.Cell) (onlyA, onlyB []client.Cell) {
	a, b = canonical(a), canonical(b)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := 0
		switch {
		case j == len(b):
			c = -1
		case i == len(a):
			c = 1
		default:
			c = cmpCells(a[i], b[j])
		}
		switch {
		case c < 0:
			onlyA = append(onlyA, a[i])
			i++
		case c > 0:
			onlyB = append(onlyB, b[j])
			j++
		default:
			if !bytes.Equal(a[i].Value, b[j].Value) {
				onlyA, onlyB = append(onlyA, a[i]), append(onlyB, b[j])
			}
			i, j = i+1, j+1
		}
	}
	return onlyA, onlyB
}
