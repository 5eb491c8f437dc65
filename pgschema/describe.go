package pgschema

import (
	"sort"
	"strings"
)

// CreateStatement returns the CQL that creates t, in the layout DESCRIBE
// uses: key columns first, the other columns by name, then the primary key
// and the options the table was given.
func (t *Table) CreateStatement() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(t.QualifiedName())
	b.WriteString(" (\n")
	inlineKey := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	rest := append([]*Column(nil), t.Columns[len(t.PartitionKey)+len(t.Clustering):]...)
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Name < rest[j].Name })
	for _, c := range append(append([]*Column(nil), t.KeyColumns()...), rest...) {
		b.WriteString("    ")
		b.WriteString(QuoteIdentifier(c.Name))
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
		if c.Kind == Static {
			b.WriteString(" static")
		}
		if inlineKey && c.Kind == PartitionKey {
			b.WriteString(" PRIMARY KEY")
		}
		b.WriteString(",\n")
	}
	if inlineKey {
		s := strings.TrimSuffix(b.String(), ",\n")
		b.Reset()
		b.WriteString(s)
		b.WriteString("\n)")
	} else {
		b.WriteString("    PRIMARY KEY (")
		if len(t.PartitionKey) > 1 {
			b.WriteByte('(')
		}
		b.WriteString(columnList(t.PartitionKey))
		if len(t.PartitionKey) > 1 {
			b.WriteByte(')')
		}
		if len(t.Clustering) > 0 {
			b.WriteString(", ")
			b.WriteString(columnList(t.Clustering))
		}
		b.WriteString(")\n)")
	}
	var with []string
	if len(t.Clustering) > 0 {
		order := make([]string, len(t.Clustering))
		for i, c := range t.Clustering {
			order[i] = QuoteIdentifier(c.Name) + " " + strings.ToUpper(c.ClusteringOrder())
		}
		with = append(with, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	names := make([]string, 0, len(t.Options))
	for n := range t.Options {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		with = append(with, n+" = "+t.Options[n])
	}
	if len(with) > 0 {
		b.WriteString(" WITH ")
		b.WriteString(strings.Join(with, "\n    AND "))
	}
	b.WriteByte(';')
	return b.String()
}

func columnList(cols []*Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = QuoteIdentifier(c.Name)
	}
	return strings.Join(names, ", ")
}
