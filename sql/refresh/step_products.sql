-- The products a failed step named, in id order (as numbers: "12" sorts before "7" as text):
-- the step is tried again on each half until the product that fails is found.
--   $1, $2 the step's first and last product id
select product_id::text as id
from product_cost_deltas
where product_id between $1::bigint and $2::bigint and month is not null
group by product_id
order by product_id
