-- A store's dispatch feed shows the drivers bound to that store and the owner's unbound ones. Each feed
-- socket's snapshot read the owner's whole fleet and filtered it in JavaScript: a chain with 9,000
-- drivers over 900 stores reading 9,000 rows per socket, 16 million when its 1,800 screens reconnect
-- after a restart (~40 s of a core in the tracking fan-out bench). This index finds exactly the
-- store's and the unbound drivers. Driver rows are rarely written (positions live in driver_positions).
CREATE INDEX drivers_owner_store ON drivers(owner_id, restaurant_id, id);
