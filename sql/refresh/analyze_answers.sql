-- After rendering answers: their statistics for the reads that look them up.
analyze product_cost_answers
