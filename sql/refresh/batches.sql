-- The refresh's steps: ranges of product ids, each folded in a transaction of its own that
-- writes about $3 month rows at most (one product's months are never split, so a product's
-- rows and notes always move together and reads stay exact between steps). The products are
-- those the log names (a rebuild, $1: every product); a product's work is its months from the
-- first one named in the window (a rebuild: from its first, $4) through $2. A range also
-- covers the ids between its products: a note written there after this plan is folded too.
--   $1 rebuild (boolean)   $2 the window's last month (date)   $3 month rows per step (integer)
--   $4 the window's first month (date)
with work as (
  select product_id, least(greatest(min(month), $4::date), $2::date) as first_month
  from product_cost_deltas
  where not $1::boolean and product_id is not null and month is not null
  group by product_id
  union all
  select product_id, $4::date
  from products
  where $1::boolean
),
weighed as (
  select product_id,
    sum(((extract(year from $2::date) - extract(year from first_month)) * 12
         + extract(month from $2::date) - extract(month from first_month))::int + 1)
      over (order by product_id rows unbounded preceding) as rows_through
  from work
)
select min(product_id)::text as first_product, max(product_id)::text as last_product, sum(1)::int as products
from weighed
group by (rows_through - 1) / $3::int
order by min(product_id)
