#!/usr/bin/python3
"""Drives alertgw's console pages in a real browser (Debian's chromium through chromium-driver
and python3-selenium), as an operator would: reads the offline-now and flapping pages, types
the token, makes a silence through the form and ends it with its button, replays a dead
letter with its button, and saves a screenshot of each page into --shots.

    console_browser.py --url http://127.0.0.1:PORT --token TOKEN --shots DIR
        --offline N --flapping DEVICE --silence-account A --silence-device D --dead-letter ID

Prints one JSON line: {"silence": the id made, "pages": [...]}. Exit 1 (saying why) when a page
does not show what it must.
"""
import argparse
import json
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

parser = argparse.ArgumentParser()
for flag in ("--url", "--token", "--shots", "--offline", "--flapping", "--silence-account",
             "--silence-device", "--dead-letter"):
    parser.add_argument(flag, required=True)
args = parser.parse_args()
os.makedirs(args.shots, exist_ok=True)

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1280,900"):
    options.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
# A click reloads the page: elements read while it reloads are stale, and the wait reads again.
wait = WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,))
pages = []


def fail(why):
    driver.save_screenshot(os.path.join(args.shots, "failure.png"))
    print("console_browser: " + why + " (page: " + driver.current_url + ")", file=sys.stderr)
    driver.quit()
    sys.exit(1)


def load(path, shot):
    driver.get(args.url + path)
    wait.until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
    pages.append(path)
    if shot:
        driver.save_screenshot(os.path.join(args.shots, shot))


def rows(table_id):
    return driver.find_elements(By.CSS_SELECTOR, "#" + table_id + " tr[data-id]")


try:
    load("/offline", "offline.png")
    if driver.find_element(By.TAG_NAME, "h1").text != "Offline now":
        fail("the offline page's title is " + driver.find_element(By.TAG_NAME, "h1").text)
    shown = driver.find_element(By.ID, "count-offline").text
    if shown != args.offline:
        fail("the offline page counts " + shown + " offline, not " + args.offline)

    load("/flapping", "flapping.png")
    if args.flapping not in driver.find_element(By.TAG_NAME, "main").text:
        fail(args.flapping + " is not on the flapping page")

    # A silence through the form, with the token typed into the page.
    load("/silences", None)
    before = {r.get_attribute("data-id") for r in rows("silences")}
    driver.find_element(By.ID, "token").send_keys(args.token)
    form = driver.find_element(By.ID, "new-silence")
    form.find_element(By.NAME, "account").send_keys(args.silence_account)
    form.find_element(By.NAME, "device").send_keys(args.silence_device)
    minutes = form.find_element(By.NAME, "minutes")
    minutes.clear()
    minutes.send_keys("45")
    form.find_element(By.NAME, "comment").send_keys("lens cleaning")
    form.find_element(By.NAME, "by").send_keys("browser")
    driver.find_element(By.ID, "create").click()
    wait.until(lambda d: len(rows("silences")) == len(before) + 1)
    made = [r for r in rows("silences") if r.get_attribute("data-id") not in before][0]
    silence = made.get_attribute("data-id")
    if "active" not in made.text or "lens cleaning" not in made.text:
        fail("the new silence's row says: " + made.text)
    driver.save_screenshot(os.path.join(args.shots, "silences.png"))
    made.find_element(By.CSS_SELECTOR, "button.end").click()
    wait.until(lambda d: any(r.get_attribute("data-id") == silence and "ended" in r.text
                             for r in rows("silences")))

    # A dead letter replayed with its button: it leaves the list.
    load("/deadletters", "deadletters.png")
    ids = [r.get_attribute("data-id") for r in rows("deadletters")]
    if args.dead_letter not in ids:
        fail("dead letter " + args.dead_letter + " is not listed (" + ", ".join(ids) + ")")
    for r in rows("deadletters"):
        if r.get_attribute("data-id") == args.dead_letter:
            r.find_element(By.CSS_SELECTOR, "button.replay").click()
            break
    wait.until(lambda d: args.dead_letter not in [r.get_attribute("data-id")
                                                  for r in rows("deadletters")])

    load("/notifications", "notifications.png")
    load("/delay", "delay.png")
    if not driver.find_elements(By.ID, "delay-plot"):
        fail("the delay page has no plot")
    print(json.dumps({"silence": silence, "pages": pages}))
except SystemExit:
    raise
except Exception as error:  # a page that did not behave: say what and where
    fail(type(error).__name__ + ": " + str(error).strip().split("\n")[0])
driver.quit()
