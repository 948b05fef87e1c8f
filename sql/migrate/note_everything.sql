-- After a trigger of the notes was made again (src/rollup/migrations.ts): what was written while it
-- was missing left no note, so everything is noted. Reads add up the daily rows until the next
-- refresh has rebuilt the rollup (migrate's own, at its end); answers' versions move.
select product_cost_changes_everything()
