op "float_neg"
