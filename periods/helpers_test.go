package periods_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func cell(v string) client.Cell {
	return client.Cell{Family: "d", Qualifier: "q", Value: []byte(v), Timestamp: 1}
}
