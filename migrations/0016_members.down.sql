CREATE OR REPLACE VIEW cqlpg.ring AS
SELECT n.name AS shard,
       n.host_id,
       n.datacenter,
       n.rack,
       coalesce(lag(t.token) OVER w, last_value(t.token) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) AS start_token,
       t.token AS end_token
FROM cqlpg.node n, unnest(n.tokens) AS t(token)
WINDOW w AS (ORDER BY t.token);
DROP TABLE IF EXISTS cqlpg.ring_version;
DROP TABLE IF EXISTS cqlpg.members;
