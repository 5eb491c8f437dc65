package cluster

import (
	"slices"
	"strconv"
	"testing"

	"github.com/cqlpg/cqlpg/sharding"
)

// TestGatewaySetTokens checks the split of the ring among gateways: the
// shares are disjoint, make up the ring, and differ in size by one token
// at most, whatever the number of gateways.
func TestGatewaySetTokens(t *testing.T) {
	ring := make([]sharding.Token, 48)
	for i := range ring {
		ring[i] = sharding.Token(int64(i)*1000 - 24000)
	}
	var want []string
	for _, tok := range ring {
		want = append(want, tok.String())
	}
	slices.Sort(want)
	for _, n := range []int{1, 2, 3, 5, 48} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			set := &GatewaySet{All: make([]Peer, n)}
			var all []string
			least, most := len(ring), 0
			for i := range n {
				share := set.Tokens(ring, i)
				least, most = min(least, len(share)), max(most, len(share))
				all = append(all, share...)
			}
			slices.Sort(all)
			if !slices.Equal(all, want) {
				t.Errorf("shares of %d gateways do not make up the ring once: %v", n, all)
			}
			if most-least > 1 {
				t.Errorf("shares of %d gateways range from %d to %d tokens", n, least, most)
			}
		})
	}
}
