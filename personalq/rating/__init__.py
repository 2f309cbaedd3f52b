"""Human preference evaluation: rating items, blind pairs, append-only votes, win rates and judges."""
