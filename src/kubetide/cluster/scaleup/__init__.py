"""Scale-up decisions (CA spec §6): expansion options, caps by cluster limits, balancing across similar
node groups. The binpacking estimator itself is :mod:`kubetide.scheduling.estimator`."""
