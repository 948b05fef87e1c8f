-- The notes a step has folded in (step_notes.sql), deleted by their row ids. Notes written by
-- transactions that commit after the step's snapshot are not among them: they stay for the next step or refresh.
delete from product_cost_deltas where ctid = any(array(select row_id from refresh_notes))
