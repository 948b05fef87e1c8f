-- The schema of a database migrated by this build (`product-cost-export migrate`), whole:
-- every table, index, function and trigger, each function and trigger as it is now (the
-- migrations in sql/migrations/ made them step by step; this is where they ended). The ETL's two
-- tables (products, product_daily_costs) are the contract's; everything else is the service's
-- (what each is for: docs/database.md, "What migrate makes"; the refresh: sql/README.md).
-- Made by pg_dump --schema-only from a new database; do not edit: run
--   bun tests/support/schema-dump.ts --write
-- (tests/db/schema-file.test.ts fails while it differs). Not a way to make a database: `migrate` is,
-- and it makes an object of its own that was dropped by hand (a function, a trigger, an index)
-- again from its block here (src/rollup/migrations.ts).
--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: product_cost_answer_version(date, date); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_answer_version(first_day date, last_day date, OUT version text, OUT changed_at text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    SET search_path TO '$user', 'public'
    AS $$
begin
  with bounds as (
    select first_day as first_day, last_day as last_day,
           date_trunc('month', first_day)::date as first_month, date_trunc('month', last_day)::date as last_month
  ),
  waiting as (
    select
      d.month, d.product_id, d.noted_at,
      -- The note's days inside the range: bits first_day..31 of the first month, 1..last_day of the last.
      case when d.month between b.first_month and b.last_month then bit_count((d.days::bigint
        & ((1::bigint << case when d.month = b.last_month then extract(day from b.last_day)::int else 31 end) - 1)
        & ~((1::bigint << case when d.month = b.first_month then extract(day from b.first_day)::int - 1 else 0 end) - 1)
      )::bit(64)) else 0 end as days
    from product_cost_deltas d cross join bounds b
    where not (d.product_id is null and d.month is null and d.days is not distinct from -1) -- a rebuild's own
  ),
  waiting_totals as (
    select
      coalesce(sum(days), 0) as days,
      count(*) filter (where month is null and product_id is not null) as attributes,
      count(*) filter (where product_id is null) as everything,
      max(noted_at) filter (where days > 0 or month is null) as changed_at
    from waiting
  ),
  folded as (
    select
      coalesce(sum(f.changes) filter (where f.day between b.first_day and b.last_day), 0) as days,
      coalesce(sum(f.changes) filter (where f.day = '-infinity'), 0) as attributes,
      coalesce(sum(f.changes) filter (where f.day = 'infinity'), 0) as everything,
      max(f.last_changed_at) as changed_at
    from product_cost_folded_changes f cross join bounds b
    where f.day between b.first_day and b.last_day or f.day in ('-infinity', 'infinity')
  )
  select
    concat_ws('.', 'product_cost_folded_changes'::regclass::oid,
      f.days + w.days, f.attributes + w.attributes, f.everything + w.everything) as version,
    to_char(greatest(f.changed_at, w.changed_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as changed_at
  from folded f, waiting_totals w
  into version, changed_at;
end
$$;

--
-- Name: product_cost_changes_everything(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_changes_everything() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  insert into product_cost_deltas (product_id, month) values (null, null);
  perform set_config('product_cost_export.everything_noted', 'on', true);
end
$$;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: product_daily_costs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_daily_costs (
    product_id bigint NOT NULL,
    cost_date date NOT NULL,
    purchase_cost_usd numeric(20,6),
    inbound_freight_usd numeric(20,6),
    shipping_to_customer_usd numeric(20,6),
    warehouse_fees_usd numeric(20,6)
);

--
-- Name: product_cost_deltas_note(public.product_daily_costs[], public.product_daily_costs[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_note(added public.product_daily_costs[], removed public.product_daily_costs[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
declare
  a product_daily_costs := added[1]; -- null when nothing was added
  r product_daily_costs := removed[1];
begin
  if cardinality(added) <= 1 and cardinality(removed) <= 1
     and (cardinality(added) = 0 or cardinality(removed) = 0 or (a.product_id = r.product_id and a.cost_date = r.cost_date)) then
    insert into product_cost_deltas (
      product_id, month, days, rows,
      purchase_cost_usd, purchase_cost_usd_count, inbound_freight_usd, inbound_freight_usd_count,
      shipping_to_customer_usd, shipping_to_customer_usd_count, warehouse_fees_usd, warehouse_fees_usd_count)
    select product_id, month, 1 << (day - 1), array[n], array[pc], array[pcn], array[fr], array[frn], array[sh], array[shn], array[wf], array[wfn]
    from (
      select
        coalesce(a.product_id, r.product_id) as product_id,
        product_cost_month_of(coalesce(a.cost_date, r.cost_date)) as month,
        extract(day from coalesce(a.cost_date, r.cost_date))::int as day,
        (a.product_id is not null)::int - (r.product_id is not null)::int as n,
        coalesce(nullif(a.purchase_cost_usd, 'NaN'), 0) - coalesce(nullif(r.purchase_cost_usd, 'NaN'), 0) as pc,
        (nullif(a.purchase_cost_usd, 'NaN') is not null)::int - (nullif(r.purchase_cost_usd, 'NaN') is not null)::int as pcn,
        coalesce(nullif(a.inbound_freight_usd, 'NaN'), 0) - coalesce(nullif(r.inbound_freight_usd, 'NaN'), 0) as fr,
        (nullif(a.inbound_freight_usd, 'NaN') is not null)::int - (nullif(r.inbound_freight_usd, 'NaN') is not null)::int as frn,
        coalesce(nullif(a.shipping_to_customer_usd, 'NaN'), 0) - coalesce(nullif(r.shipping_to_customer_usd, 'NaN'), 0) as sh,
        (nullif(a.shipping_to_customer_usd, 'NaN') is not null)::int - (nullif(r.shipping_to_customer_usd, 'NaN') is not null)::int as shn,
        coalesce(nullif(a.warehouse_fees_usd, 'NaN'), 0) - coalesce(nullif(r.warehouse_fees_usd, 'NaN'), 0) as wf,
        (nullif(a.warehouse_fees_usd, 'NaN') is not null)::int - (nullif(r.warehouse_fees_usd, 'NaN') is not null)::int as wfn
    ) one_day
    where n <> 0 or pc <> 0 or pcn <> 0 or fr <> 0 or frn <> 0 or sh <> 0 or shn <> 0 or wf <> 0 or wfn <> 0;
    return;
  end if;

  perform product_cost_deltas_note_general(added, removed);
end
$$;

--
-- Name: product_cost_deltas_note_general(public.product_daily_costs[], public.product_daily_costs[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_note_general(added public.product_daily_costs[], removed public.product_daily_costs[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  insert into product_cost_deltas (
    product_id, month, days, rows,
    purchase_cost_usd, purchase_cost_usd_count, inbound_freight_usd, inbound_freight_usd_count,
    shipping_to_customer_usd, shipping_to_customer_usd_count, warehouse_fees_usd, warehouse_fees_usd_count)
  with per_day as (
    select
      coalesce(a.product_id, r.product_id) as product_id,
      product_cost_month_of(coalesce(a.cost_date, r.cost_date)) as month,
      extract(day from coalesce(a.cost_date, r.cost_date))::int as day,
      (a.product_id is not null)::int - (r.product_id is not null)::int as n,
      coalesce(nullif(a.purchase_cost_usd, 'NaN'), 0) - coalesce(nullif(r.purchase_cost_usd, 'NaN'), 0) as pc,
      (nullif(a.purchase_cost_usd, 'NaN') is not null)::int - (nullif(r.purchase_cost_usd, 'NaN') is not null)::int as pcn,
      coalesce(nullif(a.inbound_freight_usd, 'NaN'), 0) - coalesce(nullif(r.inbound_freight_usd, 'NaN'), 0) as fr,
      (nullif(a.inbound_freight_usd, 'NaN') is not null)::int - (nullif(r.inbound_freight_usd, 'NaN') is not null)::int as frn,
      coalesce(nullif(a.shipping_to_customer_usd, 'NaN'), 0) - coalesce(nullif(r.shipping_to_customer_usd, 'NaN'), 0) as sh,
      (nullif(a.shipping_to_customer_usd, 'NaN') is not null)::int - (nullif(r.shipping_to_customer_usd, 'NaN') is not null)::int as shn,
      coalesce(nullif(a.warehouse_fees_usd, 'NaN'), 0) - coalesce(nullif(r.warehouse_fees_usd, 'NaN'), 0) as wf,
      (nullif(a.warehouse_fees_usd, 'NaN') is not null)::int - (nullif(r.warehouse_fees_usd, 'NaN') is not null)::int as wfn
    from unnest(added) as a
    full join unnest(removed) as r on r.product_id = a.product_id and r.cost_date = a.cost_date
  ),
  running as (
    select product_id, month, day,
      sum(n) over w as n,
      sum(pc) over w as pc, sum(pcn) over w as pcn, sum(fr) over w as fr, sum(frn) over w as frn,
      sum(sh) over w as sh, sum(shn) over w as shn, sum(wf) over w as wf, sum(wfn) over w as wfn
    from per_day
    where n <> 0 or pc <> 0 or pcn <> 0 or fr <> 0 or frn <> 0 or sh <> 0 or shn <> 0 or wf <> 0 or wfn <> 0
    window w as (partition by product_id, month order by day rows unbounded preceding)
  )
  select product_id, month, bit_or(1 << (day - 1)), array_agg(n::int),
    array_agg(pc), array_agg(pcn::int), array_agg(fr), array_agg(frn::int),
    array_agg(sh), array_agg(shn::int), array_agg(wf), array_agg(wfn::int)
  from running
  group by product_id, month;
end
$$;

--
-- Name: product_cost_deltas_of_delete(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_of_delete() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  if exists (select from old_rows) then
    perform product_cost_deltas_note('{}', array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$$;

--
-- Name: product_cost_deltas_of_insert(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_of_insert() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  -- An upsert fires this trigger and the UPDATE one, one of them with no rows: nothing to note.
  if exists (select from new_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), '{}');
  end if;
  return null;
end
$$;

--
-- Name: product_cost_deltas_of_products(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_of_products() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  -- Products whose attributes changed: the rendered answers that show them are stale. The
  -- sums are not (reads join products as they are), and an upsert that changes nothing notes nothing.
  insert into product_cost_deltas (product_id, month)
  select product_id, null
  from (select product_id, erp_product_id, erp_sku, product_name, is_sample from new_rows
        except
        select product_id, erp_product_id, erp_sku, product_name, is_sample from old_rows) changed;
  return null;
end
$$;

--
-- Name: product_cost_deltas_of_truncate(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_of_truncate() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  perform product_cost_changes_everything();
  return null;
end
$$;

--
-- Name: product_cost_deltas_of_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_deltas_of_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO '$user', 'public'
    AS $$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  if exists (select from old_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$$;

--
-- Name: product_cost_month_of(date); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_month_of(day date) RETURNS date
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select case when isfinite(day) then day - (extract(day from day)::int - 1) else day end
$$;

--
-- Name: product_cost_months_cover(date); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.product_cost_months_cover(last_day date) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO '$user', 'public'
    SET "DateStyle" TO 'ISO, YMD'
    AS $_$
declare
  last_month date := date_trunc('month', last_day::timestamp)::date;
  covered    date; -- the first month no partition holds yet
  partition  text;
  options    text; -- the latest partition's storage parameters (an operator's autovacuum settings carry on)
begin
  if last_day is null or (select c.relkind from pg_class c where c.oid = 'product_cost_months'::regclass) <> 'p' then
    return;
  end if;
  select substring(pg_get_expr(c.relpartbound, c.oid) from $re$TO \('([0-9-]+)'\)$re$)::date, array_to_string(c.reloptions, ', ')
  into covered, options
  from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'product_cost_months'::regclass
  order by 1 desc nulls last limit 1;
  options := coalesce(nullif(options, ''), 'fillfactor = 90');
  if covered is null then
    -- No partition yet: the months before the data's latest twelve share one.
    covered := (last_month - interval '11 months')::date;
    create table product_cost_months_history (like product_cost_months including defaults) with (fillfactor = 90);
    execute format('alter table product_cost_months attach partition product_cost_months_history for values from (minvalue) to (%L)', covered);
  end if;
  while covered <= last_month loop
    partition := 'product_cost_months_' || to_char(covered, 'YYYY_MM');
    execute format('create table %I (like product_cost_months including defaults) with (%s)', partition, options);
    execute format('alter table product_cost_months attach partition %I for values from (%L) to (%L)',
      partition, covered, (covered + interval '1 month')::date);
    covered := (covered + interval '1 month')::date;
  end loop;
end
$_$;

--
-- Name: product_cost_answers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_cost_answers (
    period text NOT NULL,
    period_start date NOT NULL,
    segment text NOT NULL,
    chunk integer NOT NULL,
    rows integer NOT NULL,
    body text NOT NULL,
    CONSTRAINT product_cost_answers_period_check CHECK ((period = ANY (ARRAY['month'::text, 'quarter'::text, 'year'::text]))),
    CONSTRAINT product_cost_answers_segment_check CHECK ((segment = ANY (ARRAY['normal'::text, 'sample'::text, 'all'::text])))
);
ALTER TABLE ONLY public.product_cost_answers ALTER COLUMN body SET COMPRESSION lz4;

--
-- Name: product_cost_deltas; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_cost_deltas (
    product_id bigint,
    month date,
    days integer,
    rows integer[],
    purchase_cost_usd numeric[],
    purchase_cost_usd_count integer[],
    inbound_freight_usd numeric[],
    inbound_freight_usd_count integer[],
    shipping_to_customer_usd numeric[],
    shipping_to_customer_usd_count integer[],
    warehouse_fees_usd numeric[],
    warehouse_fees_usd_count integer[],
    noted_at timestamp with time zone DEFAULT statement_timestamp() NOT NULL
);

--
-- Name: product_cost_folded_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_cost_folded_changes (
    day date NOT NULL,
    changes bigint NOT NULL,
    last_changed_at timestamp with time zone NOT NULL
);

--
-- Name: product_cost_months; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_cost_months (
    month date NOT NULL,
    product_id bigint NOT NULL,
    rows_before integer NOT NULL,
    purchase_cost_usd_before numeric NOT NULL,
    purchase_cost_usd_count_before integer NOT NULL,
    inbound_freight_usd_before numeric NOT NULL,
    inbound_freight_usd_count_before integer NOT NULL,
    shipping_to_customer_usd_before numeric NOT NULL,
    shipping_to_customer_usd_count_before integer NOT NULL,
    warehouse_fees_usd_before numeric NOT NULL,
    warehouse_fees_usd_count_before integer NOT NULL,
    days integer NOT NULL,
    purchase_cost_usd_days integer NOT NULL,
    inbound_freight_usd_days integer NOT NULL,
    shipping_to_customer_usd_days integer NOT NULL,
    warehouse_fees_usd_days integer NOT NULL,
    purchase_cost_usd numeric[] NOT NULL,
    inbound_freight_usd numeric[] NOT NULL,
    shipping_to_customer_usd numeric[] NOT NULL,
    warehouse_fees_usd numeric[] NOT NULL
)
PARTITION BY RANGE (month);

--
-- Name: product_cost_refreshes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_cost_refreshes (
    singleton boolean DEFAULT true NOT NULL,
    finished_at timestamp with time zone,
    notes integer NOT NULL,
    ms integer NOT NULL,
    started_at timestamp with time zone,
    window_first date,
    window_last date,
    outside_before date,
    outside_after date,
    failure text,
    failed_at timestamp with time zone,
    CONSTRAINT product_cost_refreshes_singleton_check CHECK (singleton)
);

--
-- Name: products; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.products (
    product_id bigint NOT NULL,
    erp_product_id bigint,
    erp_sku text,
    product_name text,
    is_sample boolean DEFAULT false NOT NULL
);

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: product_cost_answers product_cost_answers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_cost_answers
    ADD CONSTRAINT product_cost_answers_pkey PRIMARY KEY (period, period_start, segment, chunk);

--
-- Name: product_cost_folded_changes product_cost_folded_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_cost_folded_changes
    ADD CONSTRAINT product_cost_folded_changes_pkey PRIMARY KEY (day);

--
-- Name: product_cost_months product_cost_months_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_cost_months
    ADD CONSTRAINT product_cost_months_pkey PRIMARY KEY (month, product_id);

--
-- Name: product_cost_refreshes product_cost_refreshes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_cost_refreshes
    ADD CONSTRAINT product_cost_refreshes_pkey PRIMARY KEY (singleton);

--
-- Name: product_daily_costs product_daily_costs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_daily_costs
    ADD CONSTRAINT product_daily_costs_pkey PRIMARY KEY (product_id, cost_date);

--
-- Name: products products_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_pkey PRIMARY KEY (product_id);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: product_daily_costs_cost_date_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX product_daily_costs_cost_date_idx ON public.product_daily_costs USING btree (cost_date);

--
-- Name: product_daily_costs product_cost_deltas_on_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER product_cost_deltas_on_delete AFTER DELETE ON public.product_daily_costs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.product_cost_deltas_of_delete();

ALTER TABLE public.product_daily_costs ENABLE ALWAYS TRIGGER product_cost_deltas_on_delete;

--
-- Name: product_daily_costs product_cost_deltas_on_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER product_cost_deltas_on_insert AFTER INSERT ON public.product_daily_costs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.product_cost_deltas_of_insert();

ALTER TABLE public.product_daily_costs ENABLE ALWAYS TRIGGER product_cost_deltas_on_insert;

--
-- Name: products product_cost_deltas_on_product_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER product_cost_deltas_on_product_update AFTER UPDATE ON public.products REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.product_cost_deltas_of_products();

ALTER TABLE public.products ENABLE ALWAYS TRIGGER product_cost_deltas_on_product_update;

--
-- Name: product_daily_costs product_cost_deltas_on_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER product_cost_deltas_on_truncate AFTER TRUNCATE ON public.product_daily_costs FOR EACH STATEMENT EXECUTE FUNCTION public.product_cost_deltas_of_truncate();

ALTER TABLE public.product_daily_costs ENABLE ALWAYS TRIGGER product_cost_deltas_on_truncate;

--
-- Name: product_daily_costs product_cost_deltas_on_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER product_cost_deltas_on_update AFTER UPDATE ON public.product_daily_costs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.product_cost_deltas_of_update();

ALTER TABLE public.product_daily_costs ENABLE ALWAYS TRIGGER product_cost_deltas_on_update;

--
-- Name: product_daily_costs product_daily_costs_product_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_daily_costs
    ADD CONSTRAINT product_daily_costs_product_id_fkey FOREIGN KEY (product_id) REFERENCES public.products(product_id);

--
-- PostgreSQL database dump complete
--

