package webui

import (
	"strconv"

	"github.com/cqlpg/cqlpg/gateway/advise"
)

// advicePage is the advisor's page: its findings on the tables the form
// names, with the thresholds it used.
type advicePage struct {
	Keyspace, Table string
	PartitionWarnMB float64
	Report          *advise.Report
	Error           string
}

// adviceView runs the advisor on the tables the form names, all by
// default: /ui/advice?ks=&table=&warn_mb=.
func (q *uiRequest) adviceView() (any, error) {
	form := q.r.URL.Query()
	page := &advicePage{Keyspace: form.Get("ks"), Table: form.Get("table"), PartitionWarnMB: 10}
	if mb, err := strconv.ParseFloat(form.Get("warn_mb"), 64); err == nil && mb > 0 {
		page.PartitionWarnMB = mb
	}
	opts := advise.Options{Keyspace: page.Keyspace, Table: page.Table, PartitionWarn: int64(page.PartitionWarnMB * (1 << 20)),
		StatementTimeout: q.b.RequestTimeout(), Traffic: q.b.HotPartitions(), Queries: q.b.FilterStats()}
	if page.Table != "" && page.Keyspace == "" {
		return nil, &uiBadRequest{"a table needs its keyspace"}
	}
	rep, err := advise.Run(q.r.Context(), q.b.Cluster(), opts)
	if err != nil {
		page.Error = err.Error()
		return page, nil
	}
	page.Report = rep
	return page, nil
}
