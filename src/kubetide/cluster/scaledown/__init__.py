"""Scale-down decisions (CA spec §7): eligibility, unneeded tracking and the removable check, budgets,
cooldown. The removal simulation itself is :mod:`kubetide.scheduling.scaledown`."""
