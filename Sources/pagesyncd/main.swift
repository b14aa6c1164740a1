print("pagesyncd")
