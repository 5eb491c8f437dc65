package webui

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/sharding"
)

// whatIfPage is the what-if simulator's view: a replication setting over
// the live ring, some shards marked down, maybe a shard added.
type whatIfPage struct {
	Keyspaces []string
	Keyspace  string
	Strategy  string
	RF        int
	DCs       []dcFactor
	Local     string
	Shards    []*uiShard
	// Add, AddDC and AddRack describe the shard to add, if any.
	Add            bool
	AddDC, AddRack string
	Racks          []string
	Error          string
	Replication    string
	Factor         int
	Ring           uiRing
	LostCount      int
	LostShare      float64
	Lost           []*uiRange
	Levels         []levelView
	Growth         *growthView
}

// dcFactor is a datacenter's replication factor in the form.
type dcFactor struct {
	Name string
	RF   int
}

// levelView is a consistency level's availability.
type levelView struct {
	Name        string
	Available   bool
	Unavailable int
	Share       float64
}

// growthView is how ownership shifts when a shard is added.
type growthView struct {
	Name   string
	Vnodes int
	// Moved is the share of the token space whose replicas change: the
	// data streamed to new replicas.
	Moved float64
	Rows  []ownershipRow
}

// ownershipRow is one shard's shares before and after the new shard.
type ownershipRow struct {
	*uiShard
	PrimaryAfter, HoldsAfter float64
}

// whatIfLevels are the levels the simulator judges, in the order shown.
var whatIfLevels = []sharding.Consistency{sharding.Any, sharding.One, sharding.Two, sharding.Three,
	sharding.Quorum, sharding.All, sharding.LocalOne, sharding.LocalQuorum, sharding.EachQuorum,
	sharding.Serial, sharding.LocalSerial}

// maxLostShown bounds the ranges listed as having lost their quorum.
const maxLostShown = 50

// whatIfView builds the simulator page.
func (q *uiRequest) whatIfView() (any, error) {
	topo := q.b.Cluster().Topology()
	page, err := q.newWhatIfPage(topo.Ring)
	if err != nil {
		return nil, err
	}
	down, err := page.readForm(q.r.URL.Query(), topo)
	if err != nil {
		return nil, err
	}
	d := ringDrawing{ring: topo.Ring, selected: -1, up: func(i int) bool { return !down[i] }}
	rep, err := page.replication()
	if err != nil && page.Error == "" {
		page.Error = err.Error()
	}
	if page.Error != "" {
		page.Ring = d.draw()
		page.Shards = page.Ring.Shards
		return page, nil
	}
	page.simulate(d, rep, down)
	return page, nil
}

// newWhatIfPage returns the simulator's form as it starts: the ring's
// datacenters and racks, and the setting of the keyspace the request
// names (?ks=), else SimpleStrategy with 3 replicas.
func (q *uiRequest) newWhatIfPage(ring *sharding.Ring) (*whatIfPage, error) {
	page := &whatIfPage{Keyspaces: placeableKeyspaces(q.schema), Keyspace: q.r.URL.Query().Get("ks"),
		Strategy: "SimpleStrategy", RF: 3, Local: q.b.Datacenter()}
	for _, sh := range ring.Shards() {
		if !slices.ContainsFunc(page.DCs, func(f dcFactor) bool { return f.Name == sh.DC }) {
			page.DCs = append(page.DCs, dcFactor{Name: sh.DC, RF: 3})
		}
		if !slices.Contains(page.Racks, sh.Rack) {
			page.Racks = append(page.Racks, sh.Rack)
		}
	}
	slices.SortFunc(page.DCs, func(a, b dcFactor) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(page.Racks)
	page.AddDC, page.AddRack = page.DCs[0].Name, page.Racks[0]
	if page.Keyspace == "" {
		return page, nil
	}
	k := q.schema.Keyspace(page.Keyspace)
	if !placeable(k) {
		return nil, &uiBadRequest{fmt.Sprintf("keyspace %q does not exist", page.Keyspace)}
	}
	rep := k.Replication.Expand(dcNames(page.DCs))
	if rep.Class != sharding.NetworkTopologyStrategyClass {
		page.RF = rep.Factor
		return page, nil
	}
	page.Strategy = "NetworkTopologyStrategy"
	for i := range page.DCs {
		page.DCs[i].RF = rep.DCFactors[page.DCs[i].Name]
	}
	return page, nil
}

// readForm applies the form's fields to the page and returns the shards
// to mark down, by shard index. Before the form is first sent, the shards
// that are down now are the ones marked. A malformed factor is reported
// on the page; an unknown shard is a bad request.
func (page *whatIfPage) readForm(form url.Values, topo *sharding.Topology) ([]bool, error) {
	if v := form.Get("strategy"); v != "" {
		page.Strategy = v
	}
	var err error
	if page.RF, err = formInt(form.Get("rf"), page.RF); err != nil {
		page.Error = "rf: " + err.Error()
	}
	for i := range page.DCs {
		if page.DCs[i].RF, err = formInt(form.Get("rf."+page.DCs[i].Name), page.DCs[i].RF); err != nil {
			page.Error = "rf." + page.DCs[i].Name + ": " + err.Error()
		}
	}
	if v := form.Get("local"); v != "" {
		page.Local = v
	}
	page.Add = form.Get("add") != ""
	if v := form.Get("adddc"); v != "" {
		page.AddDC = v
	}
	if v := form.Get("addrack"); v != "" {
		page.AddRack = v
	}
	down := make([]bool, len(topo.Shards))
	if !form.Has("strategy") {
		for i, sh := range topo.Shards {
			down[i] = !sh.Pool.Alive()
		}
	}
	for _, name := range form["down"] {
		i := slices.IndexFunc(topo.Shards, func(s *sharding.Shard) bool { return s.Info.Name == name })
		if i < 0 {
			return nil, &uiBadRequest{fmt.Sprintf("there is no shard %q", name)}
		}
		down[i] = true
	}
	return down, nil
}

// replication is the setting the form describes, checked as CREATE
// KEYSPACE checks it.
func (page *whatIfPage) replication() (sharding.Replication, error) {
	opts := map[string]string{"class": page.Strategy}
	if page.Strategy == "NetworkTopologyStrategy" {
		for _, f := range page.DCs {
			opts[f.Name] = strconv.Itoa(f.RF)
		}
	} else {
		opts["replication_factor"] = strconv.Itoa(page.RF)
	}
	return sharding.ParseReplication("simulated", opts)
}

// simulate fills in what rep keeps and loses with the shards in down
// marked down, and, if asked, how a new shard would shift ownership.
func (page *whatIfPage) simulate(d ringDrawing, rep sharding.Replication, down []bool) {
	ring := d.ring
	page.Replication = rep.String()
	outage := ring.SimulateOutage(rep, down, page.Local, whatIfLevels)
	page.Factor = outage.Factor
	d.placement = ring.Placement(rep)
	d.lost = make([]bool, ring.Len())
	for _, i := range outage.LostQuorum {
		d.lost[i] = true
	}
	page.Ring = d.draw()
	page.Shards = page.Ring.Shards
	page.LostCount, page.LostShare = len(outage.LostQuorum), outage.LostQuorumShare
	for _, i := range outage.LostQuorum[:min(len(outage.LostQuorum), maxLostShown)] {
		page.Lost = append(page.Lost, rangeDetail(ring, d.placement, page.Shards, i))
	}
	for _, l := range outage.Levels {
		page.Levels = append(page.Levels, levelView{Name: l.Level.String(), Available: l.Available(), Unavailable: l.Unavailable, Share: l.Share})
	}
	if page.Add {
		g, err := growRing(ring, d.placement, rep, page.Shards, page.AddDC, page.AddRack)
		if err != nil {
			page.Error = err.Error()
		}
		page.Growth = g
	}
}

// growRing computes how ownership shifts when a shard joins the ring in dc
// and rack with as many tokens as the shards have on average, given the
// tokens a joining shard would get (allocated, as cqlpg shard add does,
// for the replication factor of rep there). The tokens are drawn with a fixed
// seed, so that the page shows the same shift every time it is loaded.
func growRing(ring *sharding.Ring, before *sharding.Placement, rep sharding.Replication, shards []*uiShard, dc, rack string) (*growthView, error) {
	vnodes := ring.Len() / len(shards)
	name := fmt.Sprintf("shard%d", len(shards))
	rf := sharding.AllocationFactor([]sharding.Replication{rep}, dc)
	grown, err := ring.WithShard(sharding.ShardInfo{Name: name, DC: dc, Rack: rack}, vnodes, rf, 1)
	if err != nil {
		return nil, err
	}
	after := grown.Placement(rep)
	g := &growthView{Name: name, Vnodes: vnodes, Moved: sharding.Moved(before, after)}
	primary, holds := grown.Ownership(), after.Ownership()
	for i, sh := range shards {
		g.Rows = append(g.Rows, ownershipRow{uiShard: sh, PrimaryAfter: primary[i], HoldsAfter: holds[i]})
	}
	added := &uiShard{Index: len(shards), Name: name, DC: dc, Rack: rack, Color: shardColor(len(shards)), Vnodes: vnodes, Up: true, New: true}
	g.Rows = append(g.Rows, ownershipRow{uiShard: added, PrimaryAfter: primary[len(shards)], HoldsAfter: holds[len(shards)]})
	return g, nil
}

// dcNames lists the datacenters' names.
func dcNames(dcs []dcFactor) []string {
	out := make([]string, len(dcs))
	for i, d := range dcs {
		out[i] = d.Name
	}
	return out
}

// formInt reads a form's replication factor, def when the field is
// absent.
func formInt(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 99 {
		return def, fmt.Errorf("%q is not a replication factor from 0 to 99", v)
	}
	return n, nil
}
