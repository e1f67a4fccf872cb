local lfs = require("lfs")
