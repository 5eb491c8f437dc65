DROP FUNCTION cqlpg.change_applies, cqlpg.fail_if,
    cqlpg.list_append, cqlpg.list_prepend, cqlpg.collection_remove, cqlpg.set_add, cqlpg.list_set, cqlpg.list_delete,
    cqlpg.jlist_append, cqlpg.jlist_prepend, cqlpg.jcollection_remove, cqlpg.jset_add, cqlpg.jlist_set, cqlpg.jlist_delete,
    cqlpg.jmap_put, cqlpg.jmap_remove, cqlpg.jmap_set;
