package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// collectionAssignment plans the SET items that change part of a
// collection or UDT: appends, prepends, removals, element and field sets.
func (p *planner) collectionAssignment(t *pgschema.Table, c *pgschema.Column, a Assignment) (cell, error) {
	if !c.Type.IsCollection() && c.Type.Kind != pgschema.UDT {
		return cell{}, invalidf("Invalid operation (%s) for non counter column %s", assignmentString(a), c.Name)
	}
	return cell{}, invalidf("Collection and field operations are not supported yet")
}

// elementDeletion plans DELETE of a collection element or UDT field.
func (p *planner) elementDeletion(t *pgschema.Table, c *pgschema.Column, d Deletion) (cell, error) {
	return cell{}, invalidf("Deleting collection elements and fields is not supported yet")
}
