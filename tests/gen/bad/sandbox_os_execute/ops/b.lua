-- Must not run: the generator loads specs without os.
os.execute("touch bad/sandbox_os_execute/PWNED")
