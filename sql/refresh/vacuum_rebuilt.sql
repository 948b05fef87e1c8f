-- After a rebuild's start (outside a transaction): the rows it deleted are dead once no read
-- still sees them, and vacuumed now the steps write the months into their pages rather than
-- beside them (else a rebuild doubles the months' files).
vacuum product_cost_months, product_cost_answers
