package webui

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// uiShard is a shard as the view shows it.
type uiShard struct {
	Index          int
	Name, DC, Rack string
	Color          string
	Vnodes         int
	// Primary is the share of the token space the shard is primary for;
	// Replica the share it holds a replica of under the page's
	// replication setting.
	Primary, Replica float64
	Up               bool
	// State is the shard's state on the ring: normal, joining or leaving
	// (sharding.Topology.State).
	State string
	// New marks the shard the what-if page adds.
	New bool
}

// uiDC groups a datacenter's shards by rack.
type uiDC struct {
	Name  string
	Color string
	Racks []uiRack
}

// uiRack is a rack's shards.
type uiRack struct {
	Name   string
	Shards []*uiShard
}

// uiRing is the ring drawing and its legend.
type uiRing struct {
	// Arcs is the SVG of the vnode ranges, one linked <path> each, built
	// in Go: html/template's escaping of a thousand arcs' attributes costs
	// several times the rest of the page. Every name in it is escaped by
	// html.EscapeString.
	Arcs   template.HTML
	Ranges int
	Shards []*uiShard
	DCs    []uiDC
}

// ringGeometry: the drawing is 520 units square; ranges are drawn between
// the inner and outer radii.
const (
	ringCenter = 260.0
	ringInner  = 150.0
	ringOuter  = 235.0
	// The datacenter band runs outside the ranges.
	bandInner = 240.0
	bandOuter = 250.0
)

// dcColors colour the datacenter band, in the datacenters' name order.
var dcColors = []string{"#4a5468", "#b0843e", "#3e7fb0", "#8a4ab0", "#3ea47e", "#b04a5e", "#7e8a3e", "#3e9cb0"}

// ringDrawing describes what to draw: the ring, a placement for the
// replica sets (nil for none), which shards are up, which ranges lost
// their quorum (nil for none), and the link of each range.
type ringDrawing struct {
	ring      *sharding.Ring
	placement *sharding.Placement
	up        func(shard int) bool
	lost      []bool
	selected  int
	href      func(i int) string
	// noArcs leaves the arcs out, for pages that show only the shards.
	noArcs bool
	// topo, when set, gives the shards' states while ranges move.
	topo *sharding.Topology
}

// draw lays out the ring: one arc per vnode range, coloured by its
// primary shard, and the legend grouped by datacenter and rack.
func (d ringDrawing) draw() uiRing {
	infos := d.ring.Shards()
	primary := d.ring.Ownership()
	var replica []float64
	if d.placement != nil {
		replica = d.placement.Ownership()
	}
	out := uiRing{Shards: make([]*uiShard, len(infos))}
	for i, info := range infos {
		sh := &uiShard{Index: i, Name: info.Name, DC: info.DC, Rack: info.Rack, Color: shardColor(i),
			Vnodes: len(info.Tokens), Primary: primary[i], Up: d.up(i), State: sharding.StateNormal}
		if d.topo != nil {
			sh.State = d.topo.State(i)
			if sh.State == sharding.StateJoining {
				sh.Vnodes = len(d.topo.Next.Shards()[i].Tokens)
			}
		}
		if replica != nil {
			sh.Replica = replica[i]
		}
		out.Shards[i] = sh
	}
	out.DCs = groupShards(out.Shards)
	out.Ranges = d.ring.Len()
	if !d.noArcs {
		out.Arcs = d.arcs(out.Shards, out.DCs)
	}
	return out
}

// arcs writes one <path> per vnode range, coloured by its primary shard,
// titled with its tokens and replicas, linked to its details, in a <a>;
// around them, a band coloured by the primary's datacenter.
func (d ringDrawing) arcs(shards []*uiShard, dcs []uiDC) template.HTML {
	n := d.ring.Len()
	b := make([]byte, 0, n*450)
	b = d.dcBand(b, shards, dcs)
	for i := range n {
		rg := d.ring.Range(i)
		owner := shards[d.ring.Owner(i)]
		b = append(b, "<a"...)
		if d.href != nil {
			b = append(b, ` href="`...)
			b = append(b, html.EscapeString(d.href(i))...)
			b = append(b, '"')
		}
		b = append(b, `><path id="arc-`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `" data-range="`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `" d="`...)
		b = appendArcPath(b, rg, ringInner, ringOuter)
		b = append(b, `" fill="`...)
		b = append(b, owner.Color...)
		b = append(b, `" class="`...)
		if i == d.selected {
			b = append(b, "selected "...)
		}
		lost := d.lost != nil && d.lost[i]
		if lost {
			b = append(b, "lost "...)
		}
		if !owner.Up {
			b = append(b, "down"...)
		}
		b = append(b, `"><title>range `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ": ("...)
		b = strconv.AppendInt(b, int64(rg.Start), 10)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(rg.End), 10)
		b = append(b, "]\nprimary "...)
		b = appendEscaped(b, owner.Name, " (", owner.DC, " / ", owner.Rack, ")")
		if d.placement != nil {
			b = append(b, "\nreplicas:"...)
			for _, r := range d.placement.RangeReplicas(i) {
				b = appendEscaped(b, " ", shards[r].Name)
				if !shards[r].Up {
					b = append(b, " (down)"...)
				}
			}
		}
		if lost {
			b = append(b, "\nno quorum"...)
		}
		b = append(b, "</title></path></a>\n"...)
	}
	return template.HTML(b)
}

// dcBand writes the datacenter band: one <path> per run of consecutive
// ranges whose primaries share a datacenter.
func (d ringDrawing) dcBand(b []byte, shards []*uiShard, dcs []uiDC) []byte {
	color := map[string]string{}
	for _, dc := range dcs {
		color[dc.Name] = dc.Color
	}
	n := d.ring.Len()
	for i := 0; i < n; {
		dc := shards[d.ring.Owner(i)].DC
		j := i
		for j+1 < n && shards[d.ring.Owner(j+1)].DC == dc {
			j++
		}
		b = append(b, `<path class="dc" d="`...)
		b = appendArcPath(b, sharding.Range{Start: d.ring.Range(i).Start, End: d.ring.Range(j).End}, bandInner, bandOuter)
		b = append(b, `" fill="`...)
		b = append(b, color[dc]...)
		b = append(b, `"><title>datacenter `...)
		b = appendEscaped(b, dc)
		b = append(b, "</title></path>\n"...)
		i = j + 1
	}
	return b
}

// appendEscaped appends the strings, HTML-escaped.
func appendEscaped(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = append(b, html.EscapeString(s)...)
	}
	return b
}

// groupShards lists the datacenters, their racks and their shards, each
// sorted by name.
func groupShards(shards []*uiShard) []uiDC {
	var dcs []uiDC
	for _, sh := range shards {
		di := slices.IndexFunc(dcs, func(d uiDC) bool { return d.Name == sh.DC })
		if di < 0 {
			dcs = append(dcs, uiDC{Name: sh.DC})
			di = len(dcs) - 1
		}
		dc := &dcs[di]
		ri := slices.IndexFunc(dc.Racks, func(r uiRack) bool { return r.Name == sh.Rack })
		if ri < 0 {
			dc.Racks = append(dc.Racks, uiRack{Name: sh.Rack})
			ri = len(dc.Racks) - 1
		}
		dc.Racks[ri].Shards = append(dc.Racks[ri].Shards, sh)
	}
	slices.SortFunc(dcs, func(a, b uiDC) int { return strings.Compare(a.Name, b.Name) })
	for i := range dcs {
		dcs[i].Color = dcColors[i%len(dcColors)]
	}
	for _, dc := range dcs {
		slices.SortFunc(dc.Racks, func(a, b uiRack) int { return strings.Compare(a.Name, b.Name) })
	}
	return dcs
}

// shardColor gives shard i a hue far from its neighbours' by stepping
// round the colour wheel by the golden angle, as #rrggbb.
func shardColor(i int) string {
	hue := math.Mod(float64(i)*137.508, 360)
	light := 0.48 + 0.10*float64(i/8%2)
	return hslHex(hue, 0.65, light)
}

// hslHex converts a colour from hue (degrees), saturation and lightness
// (0 to 1) to #rrggbb.
func hslHex(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	byteOf := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", byteOf(r), byteOf(g), byteOf(b))
}

// tokenAngle is where token t lies on the drawing, in radians clockwise
// from the top: the minimum token at the top, the ring going round once.
func tokenAngle(t sharding.Token) float64 {
	f := float64(uint64(t)^(1<<63)) / (1 << 64)
	return f*2*math.Pi - math.Pi/2
}

// appendArcPath appends the SVG path of range rg's segment of the
// annulus between radii inner and outer. A range that is the whole ring
// is drawn as two halves, as one arc cannot close a circle.
func appendArcPath(b []byte, rg sharding.Range, inner, outer float64) []byte {
	if rg.Start == rg.End {
		mid := sharding.Token(int64(uint64(rg.Start) + 1<<63))
		b = appendArcPath(b, sharding.Range{Start: rg.Start, End: mid}, inner, outer)
		b = append(b, ' ')
		return appendArcPath(b, sharding.Range{Start: mid, End: rg.Start}, inner, outer)
	}
	a0, a1 := tokenAngle(rg.Start), tokenAngle(rg.End)
	span := float64(uint64(rg.End)-uint64(rg.Start)) / (1 << 64) * 2 * math.Pi
	large := byte('0')
	if span > math.Pi {
		large = '1'
	}
	point := func(r, a float64) {
		b = strconv.AppendFloat(b, ringCenter+r*math.Cos(a), 'f', 2, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, ringCenter+r*math.Sin(a), 'f', 2, 64)
	}
	arc := func(r float64, sweep byte, a float64) {
		b = append(b, 'A')
		b = strconv.AppendFloat(b, r, 'f', 0, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r, 'f', 0, 64)
		b = append(b, " 0 "...)
		b = append(b, large, ' ', sweep, ' ')
		point(r, a)
	}
	b = append(b, 'M')
	point(outer, a0)
	b = append(b, ' ')
	arc(outer, '1', a1)
	b = append(b, 'L')
	point(inner, a1)
	b = append(b, ' ')
	arc(inner, '0', a0)
	return append(b, 'Z')
}

// ringPage is the ring page's view.
type ringPage struct {
	Ring        uiRing
	Keyspaces   []string
	Keyspace    string
	Replication string
	Factor      int
	Selected    *uiRange
	// Moving counts, while a topology operation runs, the ranges of the
	// keyspace whose replicas change, and MovingShare their share of the
	// ring.
	Moving      int
	MovingShare float64
}

// uiRange details one vnode range.
type uiRange struct {
	Index      int
	Start, End int64
	Share      float64
	Owner      *uiShard
	Replicas   []*uiShard
	// Pending are the replicas the range gains in a movement, which get
	// its writes before its reads.
	Pending []*uiShard
}

// placeable reports whether the ring places k's data: k exists and has
// a replication strategy; system keyspaces may.
func placeable(k *pgschema.Keyspace) bool {
	if k == nil || k.Virtual {
		return false
	}
	c := k.Replication.Class
	return c == sharding.SimpleStrategyClass || c == sharding.NetworkTopologyStrategyClass
}

// placeableKeyspaces lists the placeable keyspaces by name.
func placeableKeyspaces(schema *pgschema.Schema) []string {
	var out []string
	for _, k := range schema.Keyspaces() {
		if placeable(k) {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

// ringView builds the ring page: every vnode range, and, for the keyspace
// chosen, the replica set of each range; ?range=i details one range.
func (q *uiRequest) ringView() (any, error) {
	topo := q.b.Cluster().Topology()
	form := q.r.URL.Query()
	page := &ringPage{Keyspaces: placeableKeyspaces(q.schema), Keyspace: form.Get("ks")}
	d := ringDrawing{ring: topo.Ring, up: func(i int) bool { return topo.Shards[i].Pool.Alive() }, selected: -1}
	if page.Keyspace != "" {
		k := q.schema.Keyspace(page.Keyspace)
		if !placeable(k) {
			return nil, &uiBadRequest{fmt.Sprintf("keyspace %q does not exist", page.Keyspace)}
		}
		d.placement = topo.Placement(k.Replication)
		page.Replication = k.Replication.String()
		page.Factor = d.placement.Factor()
		for _, m := range topo.Movements(k.Replication) {
			page.Moving++
			page.MovingShare += float64(uint64(m.Range.End)-uint64(m.Range.Start)) / (1 << 64)
		}
	}
	d.topo = topo
	if v := form.Get("range"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= topo.Ring.Len() {
			return nil, &uiBadRequest{fmt.Sprintf("range %q is not a range of the ring (0 to %d)", v, topo.Ring.Len()-1)}
		}
		d.selected = i
	}
	prefix := "/ui?"
	if page.Keyspace != "" {
		prefix += url.Values{"ks": {page.Keyspace}}.Encode() + "&"
	}
	d.href = func(i int) string { return prefix + "range=" + strconv.Itoa(i) + "#range" }
	page.Ring = d.draw()
	if d.selected >= 0 {
		page.Selected = rangeDetail(topo.Ring, d.placement, page.Ring.Shards, d.selected)
		if d.placement != nil {
			replicas, pending := d.placement.WriteReplicas(topo.Ring.Range(d.selected).End)
			for _, r := range replicas[len(replicas)-pending:] {
				page.Selected.Pending = append(page.Selected.Pending, page.Ring.Shards[r])
			}
		}
	}
	return page, nil
}

// rangeDetail describes range i and, with a placement, its replicas.
func rangeDetail(ring *sharding.Ring, p *sharding.Placement, shards []*uiShard, i int) *uiRange {
	rg := ring.Range(i)
	out := &uiRange{Index: i, Start: int64(rg.Start), End: int64(rg.End), Share: ring.RangeShare(i), Owner: shards[ring.Owner(i)]}
	if p != nil {
		for _, r := range p.RangeReplicas(i) {
			out.Replicas = append(out.Replicas, shards[r])
		}
	}
	return out
}
