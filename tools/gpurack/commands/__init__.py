"""One module per `gpurack` verb: each registers its arguments and calls the domain code."""
