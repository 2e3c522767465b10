import socket, struct, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 18097)); s.listen(1); s.settimeout(10)
c, _ = s.accept(); c.settimeout(3)
buf = b""
# Server preface: empty SETTINGS, and ACK theirs later.
c.sendall(struct.pack(">I", 0)[1:] + b"\x04\x00" + b"\x00\x00\x00\x00")
heads = []
try:
    while len(heads) < 3:
        d = c.recv(65536)
        if not d: break
        buf += d
        if buf.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"):
            buf = buf[24:]
        while len(buf) >= 9:
            ln = int.from_bytes(buf[:3], "big"); ty = buf[3]; fl = buf[4]; sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
            if len(buf) < 9 + ln: break
            pl = buf[9:9+ln]; buf = buf[9+ln:]
            print(f"frame type {ty} flags {fl:#x} stream {sid} len {ln}: {pl.hex()}")
            if ty == 4 and not fl & 1:
                c.sendall(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00")
            if ty == 1:
                heads.append(pl)
except socket.timeout:
    pass
print("header blocks:", [len(h) for h in heads])
