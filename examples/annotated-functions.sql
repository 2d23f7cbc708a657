-- Annotated routines that pgmcp turns into tools (docs/sql-tools.md). Run with
--   psql -d yourdb -f examples/annotated-functions.sql
-- then start pgmcp against that database; the tools appear in tools/list.
CREATE SCHEMA IF NOT EXISTS shop;

CREATE TABLE IF NOT EXISTS shop.orders (
  id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer text NOT NULL,
  owner_id text NOT NULL DEFAULT current_setting('auth.user_id', true),
  total numeric(10, 2) NOT NULL,
  placed_at timestamptz NOT NULL DEFAULT now()
);

-- A read-only lookup: STABLE, so it runs in a READ ONLY transaction. Unknown ids raise PM404.
CREATE OR REPLACE FUNCTION shop.order_total(order_id int4) RETURNS numeric
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, shop AS $$
DECLARE result numeric;
BEGIN
  SELECT total INTO result FROM orders WHERE id = order_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'PM404', MESSAGE = format('No order %s.', order_id),
      HINT = 'Call recent_orders to see the ids.';
  END IF;
  RETURN result;
END $$;
COMMENT ON FUNCTION shop.order_total IS E'@mcp Total of one order.\n@tags orders';

-- A set of rows: {"items": [{"id": …, "customer": …, "total": …}]}.
CREATE OR REPLACE FUNCTION shop.recent_orders(max_rows int4 DEFAULT 10)
RETURNS TABLE (id int4, customer text, total numeric, placed_at timestamptz)
LANGUAGE sql STABLE SET search_path = pg_catalog, shop AS $$
  SELECT id, customer, total, placed_at FROM orders ORDER BY placed_at DESC LIMIT max_rows
$$;
COMMENT ON FUNCTION shop.recent_orders IS E'The latest orders, newest first.\n@mcp\n@tags orders';

-- The caller's own orders, through the identity pgmcp sets for each call.
CREATE OR REPLACE FUNCTION shop.my_orders() RETURNS SETOF shop.orders
LANGUAGE sql STABLE SET search_path = pg_catalog, shop AS $$
  SELECT * FROM orders WHERE owner_id = current_setting('auth.user_id', true)
$$;
COMMENT ON FUNCTION shop.my_orders IS E'@mcp Orders placed by the calling user.\n@authorize customer, staff';

-- A write: VOLATILE, read-write only when the database is configured allowWrites.
CREATE OR REPLACE FUNCTION shop.place_order(customer text, total numeric)
RETURNS shop.orders
LANGUAGE sql VOLATILE SET search_path = pg_catalog, shop AS $$
  INSERT INTO orders (customer, total) VALUES (customer, total) RETURNING *
$$;
COMMENT ON FUNCTION shop.place_order IS E'@mcp Places an order.\n@mcp_name create_order\n@authorize staff';
