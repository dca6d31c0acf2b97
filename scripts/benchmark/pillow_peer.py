#!/usr/bin/env python3
"""The peer a team would write: requests + Pillow, one decode per photo (JPEG draft mode
at the largest DCT scale that still covers the biggest tier), EXIF orientation, sRGB,
centre-cropped squares at 900 and 330 px, JPEG quality 82, 4 threads. HEIC through
pillow-heif (libheif and libde265, as avatar-cache uses), as a team would add it.

usage: pillow_peer.py EXPORT OUT_DIR
"""
import hashlib, io, json, os, sys
from concurrent.futures import ThreadPoolExecutor

import requests
from PIL import Image, ImageCms, ImageOps
from pillow_heif import register_heif_opener

register_heif_opener()

export, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
users = json.load(open(export))["users"]
urls = list(dict.fromkeys(u["profileImageUrl"] for u in users if u.get("profileImageUrl")))
session = requests.Session()
adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=4)
session.mount("http://", adapter)
srgb = ImageCms.createProfile("sRGB")


def work(url):
    try:
        data = session.get(url, timeout=30).content
        key = hashlib.sha256(data).hexdigest()
        image = Image.open(io.BytesIO(data))
        if image.format == "JPEG":
            image.draft("RGB", (900, 900))
        image = ImageOps.exif_transpose(image)
        icc = image.info.get("icc_profile")
        if icc and image.mode in ("RGB", "CMYK"):
            image = ImageCms.profileToProfile(image, ImageCms.ImageCmsProfile(io.BytesIO(icc)), srgb, outputMode="RGB")
        if image.mode in ("RGBA", "LA", "P"):
            image = image.convert("RGBA")
            background = Image.new("RGBA", image.size, (255, 255, 255, 255))
            image = Image.alpha_composite(background, image)
        image = image.convert("RGB")
        side = min(image.size)
        left, top = (image.width - side) // 2, (image.height - side) // 2
        square = image.crop((left, top, left + side, top + side))
        big = square.resize((900, 900), Image.LANCZOS, reducing_gap=2.0) if side > 900 else square
        small = big.resize((330, 330), Image.LANCZOS) if big.width > 330 else big
        big.save(os.path.join(out, f"{key}-900.jpg"), quality=82)
        small.save(os.path.join(out, f"{key}-330.jpg"), quality=82)
        return True
    except Exception as error:
        print(f"{url}: {error}", file=sys.stderr)
        return False


with ThreadPoolExecutor(max_workers=4) as pool:
    done = sum(pool.map(work, urls))
print(f"{done}/{len(urls)}", file=sys.stderr)
