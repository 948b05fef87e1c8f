-- The notes a step took (step_notes.sql put them in refresh_notes): what it folded.
select count(*)::int as n from refresh_notes
