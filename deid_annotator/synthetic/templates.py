"""Note templates written for this project (no text from real notes).

Each entry is a pair ``(prose, telegraphic)`` of alternative template lists; see
:mod:`.builder` for the ``[a|b]`` / ``{slot}`` syntax and :mod:`.generator` for the
slots. Sentences carry their own punctuation; the generator joins them with varied
whitespace and renders the whole note in its case style.
"""
from __future__ import annotations

T = tuple[tuple[str, ...], tuple[str, ...]]

# ------------------------------------------------------------------ nursing (ICU/floor)

NURSING_HEADER: T = (
    ("Nursing Progress Note {shift}", "Nursing Note {date:note:short} {shift}",
     "{service_up} Nursing Progress Note, {date:note:any}", "NURSING ADMISSION NOTE",
     "Nursing shift summary ({shift})", "Nursing Note - {date:note:full} {time}",
     "RN Progress Note for {pt_formal}", "Nursing progress note {time}"),
    ("npn {shift}", "NPN {date:note:short} {shift}", "nsg note {shift}", "{service} npn",
     "RN note {date:note:short}", "npn {time}", "Nursing {shift}", "NPN"),
)

NURSING_BANNER: T = (
    ("Patient: {pt_formal}   MRN: {mrn}   Room: {room}", "Name: {pt_formal} | MR#: {mrn} | DOB: {date:dob:full}",
     "{pt_formal} (MRN {mrn}), {dept}, {room}", "Pt name: {pt_formal}  Unit: {dept}  Bed: {room}"),
    ("pt: {pt_formal} mrn {mrn} rm {room}", "{pt_formal} #{mrn}", "{pt_formal} / {mrn} / {dept} {room}"),
)

NURSING_INTRO: T = (
    ("{pt_title} is a {age} year old [man|gentleman|male] with a history of {pmh} who was admitted on {date:admit:any} with {dx}.",
     "{age} year old [woman|female|lady] with {pmh}, transferred from {osh} on {date:admit:short} for management of {dx}.",
     "Patient is a {age}-year-old with {dx}, admitted to {hosp_any} {date:admit:any} after presenting to {osh} with {dx}.",
     "{pt_title}, age {age}, POD #{n:1-9} s/p {proc}. Past history includes {pmh}.",
     "Briefly, this is a {age} y/o [M|F] with {pmh}, now hospital day {n:2-14} for {dx}.",
     "{pt_first} is a {age} year old retired {prof} admitted {date:admit:short} with {dx} and {dx}."),
    ("{age}yo [m|f] w/ {pmh} adm {date:admit:short} w/ {dx}.", "{age} y/o [M|F] s/p {proc} {date:surg:short}, hx {pmh}.",
     "pt is {age} yo tx'd from {osh} {date:admit:short} w/ {dx}.", "{age}[M|F] hx {pmh} here w/ {dx}.",
     "{age} yo [m|f] {dx} vs {dx}, HD#{n:2-12}.", "pt {age}y/o, POD{n:1-6} {proc}, PMH {pmh}."),
)

NURSING_EVENTS: T = (
    ("Events overnight: hypotensive to {bp} around {time}, {doc:resident} aware, given a 500cc NS bolus with good response.",
     "At {time} the patient became tachycardic to {hr}; {doc:resident} notified and {dose} given.",
     "Seen by {doc:consult} from {consult} this afternoon; recommendations appreciated.",
     "Family meeting held with {doc:attending}, {rel:hcp} and social work; plan to continue full support for now.",
     "Patient went to {service} for {proc} at {time} and returned without incident.",
     "Rapid response called at {time} for desaturation to 84%; {doc:resident} at bedside, placed on {device} and improved.",
     "Received patient from {osh} via [ambulance|Med Flight|EMS] at {time}.", "Patient was the restrained driver in an MVC; police report lists plate {vehicle}.",
     "No acute events this shift.", "Uneventful night.",
     "Dr. {doc_last:attending} made rounds and updated the plan.",
     "Transferred to {dept} room {room} at {time}, report given to {rn}, RN.",
     "Self-extubated at {time}; reintubated by anesthesia without difficulty.",
     "Fell while trying to get out of bed at {time}; no injury, bed alarm on, {doc:resident} notified.",
     "Bedside bronchoscopy done by {doc:consult}; BAL sent.",
     "New onset afib with RVR to {n:130-170} at {time}, {dose}, converted to SR."),
    ("events: sbp 80s @ {time}, {doc:resident} aware, 500cc ns bolus w/ good effect.", "no events.",
     "uneventful shift.", "{time} tachy to {hr}, md aware, {dose}.",
     "seen by {consult} ({doc:consult}), recs f/u.", "to {service} for {proc} @ {time}, back w/o incident.",
     "rrt called {time} for desat to 80s, placed on {device}, improved.",
     "rec'd from {osh} via ems {time}.", "MD {doc_last:attending} aware of all of above.",
     "family mtg w/ {doc:attending} and {relword:hcp} {relname:hcp}, full code for now.",
     "d/w {doc:resident} re: {dx}, plan to follow.",
     "self-extubated {time}, reintubated by anesthesia.",
     "found on floor {time}, no injury, bed alarm on, {doc:resident} aware.",
     "bedside bronch by {doc:consult}, bal sent.",
     "afib rvr {n:130-170} @ {time}, {dose}, back to sr."),
)

NEURO: T = (
    ("Alert and oriented x{n:1-3}, following commands and moving all extremities.",
     "Sedated on {drip}; RASS -{n:1-4}, opens eyes to voice.", "PERRL {n:2-4}mm and brisk.",
     "Complains of incisional pain {pain}, given {dose} with good effect.",
     "Intermittently confused overnight, reorienting easily; CAM-ICU positive.",
     "GCS {n:8-15}. Negative Babinski bilaterally.", "Speech clear.",
     "Remains restless at times, {dose} given at {time} with fair effect.",
     "CIWA scores {n:2-18}, {dose} per protocol.",
     "Slept in short naps, pain controlled on {drip}.",
     "Pupils equal and reactive, {n:2-4}mm; gag and cough intact.",
     "Moves all extremities to command with {decoy} on the left.",
     "Propofol held at {time} for a sedation holiday; opened eyes spontaneously and tracked.",
     "Oriented to person only, pleasant and cooperative with care.",
     "EVD open at {n:10-20} cm H2O, draining clear CSF {n:5-15}cc/hr; ICP {n:5-22}.",
     "Seizure precautions maintained; on Keppra 500mg IV q12h.",
     "Tremulous and diaphoretic this morning, CIWA {n:10-22}, Ativan 1mg IV given.",
     "Pain managed with a PCA (Dilaudid 0.2mg demand, 10 min lockout); used {n:4-20} times this shift.",
     "Slept from {time} to {time} with sleep aid; no agitation."),
    ("a&ox{n:1-3}, mae, follows commands.", "sedated on {drip}, rass -{n:1-4}.", "perrla {n:2-4}mm brisk.",
     "c/o pain {pain}, {dose} w/ good effect.", "confused at times, reorients. cam icu +.",
     "gcs {n:8-15}. {decoy}.", "mae, {decoy}, no focal deficits.", "restless, {dose} @ {time}.",
     "ciwa {n:2-18}.", "lethargic but arousable, nods appropriately.", "neuro intact.",
     "perl {n:2-4}mm, +gag/cough.",
     "mae to command, {decoy} L.",
     "sedation holiday @ {time}, opens eyes, tracks.",
     "oriented to self only, pleasant.",
     "evd @ {n:10-20}cmh2o, clear csf {n:5-15}cc/hr, icp {n:5-22}.",
     "sz precautions, keppra 500 iv q12.",
     "tremulous, ciwa {n:10-22}, ativan 1mg iv.",
     "pca dilaudid, {n:4-20} attempts/{n:4-20} delivered.",
     "slept {time}-{time}, no agitation.",
     "no sedation overnight, calm."),
)

CV: T = (
    ("{hr}, {bp}, no ectopy noted.", "Remains on {drip}; weaning as tolerated to keep MAP above 65.",
     "{lab:K}, repleted with 40 mEq KCl by mouth.", "Peripheral pulses palpable, extremities warm, trace edema.",
     "{cvp}, {cvp}.", "Swan-Ganz in place via R IJ; {cvp}.", "Telemetry shows {hr}; occasional PVCs.",
     "{lab:Mg}, repleted with 2 gm magnesium sulfate IV.", "Hematocrit {n:21-38}.{n:0-9}, no signs of bleeding.",
     "Heparin drip per nomogram, PTT {n:40-110} at {time}.",
     "Converted to sinus rhythm after amiodarone bolus at {time}.",
     "Skin warm and dry, cap refill less than 3 seconds.",
     "Radial A-line dampened, flushed and re-zeroed; correlates with cuff pressures.",
     "Troponin trending down, last {lab:troponin}.",
     "Transfused 1 unit PRBC for {lab:Hct}; post-transfusion Hct pending.",
     "Dopplerable DP/PT pulses bilaterally, feet cool to touch.",
     "Pacer wires capped, underlying rhythm {hr}."),
    ("{hr}, {bp}.", "on {drip}, weaning to keep map >65.", "{lab:K} repleted w/ 40meq kcl po.",
     "+pp bilat, ext warm, {n:1-3}+ edema.", "{cvp}. {cvp}.", "swan via r ij, {cvp}.", "tele {hr}, occ pvc.",
     "{lab:Mg}, 2g mag given.", "hct {n:21-38}.{n:0-9}, no s/s bleeding.", "hep gtt per nomo, ptt {n:40-110} @ {time}.",
     "vss.", "VSS, afebrile.",
     "converted to sr after amio bolus {time}.",
     "skin w/d, crt <3 sec.",
     "a-line dampened, flushed/rezeroed.",
     "trop trending down, {lab:troponin}.",
     "1u prbc for {lab:Hct}, f/u post hct.",
     "dp/pt dopplerable bilat.",
     "pacer wires capped, {hr}.",
     "{bp} on {drip}."),
)

RESP: T = (
    ("Lungs clear in the upper lobes, diminished at the bases.", "Intubated on {vent}; suctioned for thick tan secretions.",
     "On {n:2-6}L nasal cannula, {spo2}.", "{abg} at {time}.", "RT following; nebs q4h.",
     "Extubated at {time} to face tent 50%, tolerating well.", "Incentive spirometer to {n:5-15}00.",
     "Chest x-ray this morning shows improving infiltrates.", "Chest tube to suction, no air leak, Pleur-evac draining serosanguinous fluid.",
     "Weaned to CPAP 5/5 at {time}, RSBI {n:30-120}; tolerated {n:1-4} hours before resting on AC.",
     "Breath sounds coarse throughout, cleared somewhat with chest PT.",
     "Trach site clean, Shiley #{n:6-8} in place, changed inner cannula.",
     "Desaturated to {n:82-89}% with turning, recovered with bagging.",
     "Cough weak, unable to raise secretions; nasotracheal suctioning for small amounts.",
     "{vital_rr}, no use of accessory muscles."),
    ("ls clear upper, dim bases.", "vent: {vent}. sx'd for thick tan secretions.", "{n:2-6}L nc, {spo2}.",
     "{abg} @ {time}.", "nebs q4h per rt.", "extubated {time} to face tent 50%.", "ic {n:5-15}00.",
     "cxr improving.", "ct to sx, no air leak.", "rr {n:14-28}, nonlabored.", "coarse bilat, sx'd q2-3h.",
     "cpap 5/5 @ {time}, rsbi {n:30-120}, tol {n:1-4}hrs then back to ac.",
     "coarse bs, improved w/ cpt.",
     "trach site ok, shiley #{n:6-8}, ic changed.",
     "desat to {n:82-89}% w/ turning, bagged, recovered.",
     "weak cough, nts for sm amt.",
     "{vital_rr}, no accessory mm use.",
     "o2 weaned to {n:2-4}L."),
)

GI: T = (
    ("Abdomen soft, non-tender, positive bowel sounds.", "Tube feeds ({feed}) at {n:20-70}cc/hr via [NGT|OGT|Dobhoff|PEG|J-tube], residuals minimal.",
     "NPO after midnight for {proc}.", "No bowel movement this shift; Colace and senna given.",
     "Tolerating clear liquids, advance as tolerated.", "Loose stool x{n:1-5}, C. diff sent.",
     "{lab:glucose}, covered with {n:2-8} units regular insulin per sliding scale.", "{lab:lipase}; LFTs pending.",
     "Abdomen distended but soft, hypoactive bowel sounds.",
     "OGT to low continuous wall suction draining {n:50-400}cc bilious output.",
     "Passed small amount of flatus; KUB this morning unchanged.",
     "Speech and swallow evaluated, cleared for pureed diet with thin liquids.",
     "Guaiac positive stool x1, team aware, Protonix increased to BID.",
     "Flexiseal in place draining liquid brown stool."),
    ("abd soft nt/nd, +bs.", "tf {feed} @ {n:20-70}cc/hr via [ngt|ogt|dobhoff|PEG|j-tube], resid <{n:3-15}0cc.", "npo p mn for {proc}.",
     "no bm, colace/senna given.", "tol clears.", "loose stool x{n:1-5}, c diff sent.",
     "fs {n:90-300} covered w/ {n:2-8}u ssi.", "ogt to lcws, drained {n:50-400}cc bilious.",
     "abd distended, soft, hypoactive bs.",
     "passing flatus, kub unchanged.",
     "s&s eval: pureed/thin liq.",
     "gu+ stool x1, md aware, protonix bid.",
     "flexiseal draining liquid brown.",
     "tf at goal {n:40-70}cc/hr."),
)

GU: T = (
    ("Foley catheter draining clear yellow urine, {uo}.", "{lab:Cr}, {lab:BUN}; renal following.",
     "Diuresed with Lasix 40mg IV at {time} with good response, {io}.", "Voiding without difficulty.",
     "CVVH running, removing {n:50-200}cc/hr.",
     "Urine dark amber, specimen sent for UA and culture.",
     "Bladder scan {n:150-600}cc; straight cathed for {n:200-700}cc.",
     "Hemodialysis today via R IJ Quinton, {n:1-3}L removed.",
     "Creatinine stable at {n:1-3}.{n:0-9}; renal dosing of meds per pharmacy."),
    ("foley patent, clear yellow, {uo}.", "{lab:Cr}, {lab:BUN}.", "lasix 40 iv @ {time}, good response, {io}.",
     "voiding qs.", "cvvh running net neg {n:50-200}/hr.", "u/o {uo}.",
     "urine dk amber, ua/ucx sent.",
     "bladder scan {n:150-600}, straight cath {n:200-700}cc.",
     "hd today via quinton, {n:1-3}L off.",
     "cr stable {n:1-3}.{n:0-9}.",
     "foley d/c'd {time}, due to void."),
)

ID: T = (
    ("{temp}, {lab:WBC}.", "Continues on {abx} and {abx}.", "Blood cultures x2 sent at {time}.",
     "Contact precautions maintained for MRSA.", "Afebrile this shift.",
     "Sputum culture growing gram positive cocci, sensitivities pending.",
     "{abx} level drawn at {time}, trough {n:8-22}.",
     "Line cultures negative to date."),
    ("{temp}, {lab:WBC}.", "on {abx}/{abx}.", "bc x2 sent {time}.", "contact precautions (mrsa).", "afeb.",
     "tmax {temp_c}, pan cx'd.",
     "sputum gpc, sens pending.",
     "{abx} trough {n:8-22} @ {time}.",
     "cx neg to date."),
)

SKIN: T = (
    ("Skin intact except stage {n:1-3} pressure area on coccyx, Mepilex applied.", "Braden {n:9-20}; turning q2h.",
     "Incision clean, dry and intact, staples in place.", "{device} site without redness.",
     "Sacral wound dressed with Duoderm; no drainage.",
     "Bilateral heels boggy, offloaded with pillows.",
     "Ecchymosis noted at previous IV sites.",
     "Skin warm, dry, and intact; Venodyne boots on."),
    ("skin intact.", "coccyx stage {n:1-3}, mepilex on.", "braden {n:9-20}, turned q2h.", "incision c/d/i.",
     "{device} site wnl.",
     "sacral duoderm, no drainage.",
     "heels boggy, offloaded.",
     "ecchymosis old iv sites.",
     "venodynes on."),
)

SOCIAL: T = (
    ("{rel:hcp}, who is the health care proxy, called at {time} and was updated; [reachable at|phone] {phone:rel}.",
     "{rel:spouse} visited this evening and spoke with {doc:resident}.",
     "{rel:child} is the primary contact ({phone:rel}).",
     "Patient lives with {relword:spouse} in {city} and worked as a {prof} until last year.",
     "Social work following; family from {city}, {state}.",
     "{relword:child} {relname:child} requests a call at {phone:rel} with any changes.",
     "{relname:other} ({relword:other}) called twice, updated by RN per patient's request.",
     "Full code. HCP is {relname:hcp} ({relword:hcp}), {phone:rel}.",
     "Family is {religion} and requested a visit from the chaplain.", "Patient enjoys daily walks at {locother} with {relword:spouse}.",
     "Patient's primary language is {lang}; interpreter used.",
     "No visitors today; {relword:child} called from out of state.",
     "{relname:hcp} asked about rehab options; case management to call {phone:rel}.",
     "Patient is a former smoker, quit {n:2-30} years ago; drinks {n:1-6} beers per day per family.",
     "Patient drove to the ED; car (plate {vehicle}) is in the visitor garage, {relword:spouse} aware."),
    ("{relword:hcp} {relname:hcp} (hcp) called {time}, updated. {phone:rel}.", "{relword:spouse} {relname:spouse} in to visit.",
     "{relword:child} {relname:child} {phone:rel}.", "lives w/ {relword:spouse} in {city}, works as {prof}.",
     "sw following.", "hcp {relname:hcp}, cell {phone:rel}.", "{relname:other} ({relword:other}) called x2, updated.",
     "full code.", "dnr/dni per {relword:hcp}.", "{lang} speaking, interpreter used.",
     "{relword:spouse} {relname:spouse} at bedside most of day.",
     "no visitors, {relword:child} called from out of state.",
     "{relname:hcp} asking re rehab, cm to call.",
     "ex-smoker, etoh {n:1-6} beers/d per family."),
)

PLAN: T = (
    ("Plan: continue current management, wean {drip} as tolerated, follow labs.",
     "Plan is to transfer to the floor in the morning if stable.", "Plan: {proc} on {date:fu:short} per {doc:attending}.",
     "Continue to monitor hemodynamics, pain control, and support family.",
     "Possible discharge to {rehab} later this week; case management aware.",
     "{proc} is tentatively scheduled for the {date_ord:fu}.",
     "Repeat lytes at {time}; replete K and Mg per protocol.",
     "Keep NPO for possible {proc} tomorrow.",
     "Wean sedation in the morning for SBT if FiO2 remains below 50%."),
    ("plan: cont current mgmt, wean {drip}.", "{proc} planned for the {date_ord:fu}.", "? c/o to floor in am.", "plan {proc} {date:fu:short}.",
     "cont to monitor, pain mgmt, support family.", "? d/c to {rehab} later this wk.", "f/u am labs.",
     "lytes @ {time}, replete per protocol.",
     "npo for ? {proc}.",
     "sbt in am if fio2 <50%."),
)

NURSING_SIGN: T = (
    ("{sig:rn}", "{sig:rn}", "{sig:rn} {time}"),
    ("{sig:rn}", "{sig:rn}", "{sig:rn} {time}"),
)

SYSTEMS = (("Neuro", "NEURO", "N", NEURO), ("CV", "CV", "C/V", CV), ("Resp", "RESP", "Pulm", RESP),
           ("GI", "GI", "G.I.", GI), ("GU", "GU", "Renal", GU), ("ID", "ID", "I.D.", ID),
           ("Skin", "SKIN", "Integ", SKIN), ("Social", "SOCIAL", "Soc", SOCIAL), ("Plan", "PLAN", "P", PLAN))

# ------------------------------------------------------------------ progress (MD/NP SOAP)

PROGRESS_HEADER: T = (
    ("{service_up} Progress Note", "Progress Note - {date:note:any}", "Attending Progress Note {date:note:full}",
     "Daily Progress Note, HD #{n:2-14}", "NP Progress Note"),
    ("prog note {date:note:short}", "{service} prog note", "S/O/A/P {date:note:short}", "HD#{n:2-14} note"),
)

SUBJECTIVE: T = (
    ("S: Patient reports {pain} pain, slept poorly, tolerating diet.", "S: No complaints this morning. Denies chest pain or shortness of breath.",
     "Subjective: Feels \"a little better\", still with dyspnea on exertion.", "S: Family ({rel:hcp}) at bedside, concerned about confusion."),
    ("S: c/o pain {pain}, slept poorly.", "s: no c/o, denies cp/sob.", "S: feels better, +doe.",
     "S: {relword:hcp} at bedside, worried re: confusion.", "s: nausea overnight, zofran x1."),
)

OBJECTIVE: T = (
    ("O: {vitals}. Exam notable for {sign} [negative|positive] and {decoy}. Labs: {labs}.",
     "Objective: {vitals}. {labs}. {abg}.", "O: {vitals}; I/O {io}. Labs this AM: {labs}."),
    ("O: {vitals}. {labs}.", "o: {vitals}, {io}. labs {labs}.", "O: {vitals}. {sign} neg. {labs}."),
)

ASSESSMENT: T = (
    ("A/P: {age} year old with {pmh} admitted with {dx}.\n1. {dx}: continue {abx}, follow cultures.\n2. {dx}: {dose}, check {lab} in AM.\n3. Dispo: {doc:attending} to discuss with {rel:hcp}.",
     "Assessment and Plan: {age}M with {dx}, improving. Continue {dose}. Consult {consult}. Code status discussed with {rel:hcp}: full code.",
     "A/P: {dx}, likely secondary to {dx}. Will hold {med}, start {dose}. Discussed with {doc:attending}."),
    ("A/P: {age}yo w/ {dx}.\n#{dx} - cont {abx}, f/u cx\n#{dx} - {dose}\n#dispo - d/w {relword:hcp} {relname:hcp}",
     "a/p {age} [m|f] {dx}, improving. cont {dose}. {consult} c/s. full code per {relword:hcp}.",
     "A/P: {dx} 2/2 {dx}. hold {med}. d/w {doc:attending}."),
)

PROGRESS_SIGN: T = (
    ("{sig:md}", "{sig:np}", "Seen and examined with {doc:attending}. {sig:md}"),
    ("{sig:md}", "{sig:np}", "d/w {doc:attending}. {sig:md}"),
)

# ------------------------------------------------------------------ discharge summary

DISCHARGE: tuple[str, ...] = (
    "DISCHARGE SUMMARY",
    "Patient: {pt_formal}    Unit No: {mrn}    Account: {acct}",
    "Admission Date: {date:admit:full}    Discharge Date: {date:disch:full}",
    "Date of Birth: {date:dob:full}    Age: {age}    Sex: {sex}[    SSN: {ssn}|]",
    "Service: {spec}    Attending: {doc_name:attending}, MD",
    "Primary Care Physician: {doc_name:pcp}, {hosp_any} ({phone:clinic})",
    "Insurance: [Medicare|Medicaid|commercial], member ID {hp}",
)

DISCHARGE_HPI: T = (
    ("HISTORY OF PRESENT ILLNESS: {pt_title} is a {age} year old {sexword} with {pmh} who presented to {osh} on {date:admit:short} with {n:2-7} days of {dx}. "
     "Vitals there: {vitals}. {pronoun} was transferred to {hosp} for further care.",
     "HPI: This {age}-year-old {sexword} was in {pron_poss} usual state of health until {date:past:short}, when {pron_lower} developed {dx}. "
     "{pronoun} was seen by {pron_poss} PCP, {doc:pcp}, who referred {pron_obj} to the ED. Initial {vitals}.",
     "HISTORY: {age} year old {prof} from {city} with {pmh}, admitted with {dx}. {pronoun} was last admitted to {hosp_any} in {date:prior:coarse} for {dx}."),
    ("HPI: {age}yo w/ {pmh} p/w {n:2-7}d {dx} to {osh} {date:admit:short}, tx'd here. {vitals}.",
     "hpi: {age} [m|f] {dx} since {date:past:short}, seen by pcp {doc:pcp}, sent to ed.",),
)

DISCHARGE_COURSE: T = (
    ("HOSPITAL COURSE: The patient was admitted to the {service_up} under {doc:attending}. {dx} was treated with {abx} with gradual improvement. "
     "{pronoun} underwent {proc} on {date:surg:any} without complication. {labs}. "
     "On {date:admit:short} {pron_lower} developed {dx} requiring {drip}; this resolved by {date:disch:short}.",
     "HOSPITAL COURSE BY PROBLEM:\n1. {dx}: managed with {dose}; {labs}.\n2. {dx}: {consult} consulted ({doc:consult}); started {dose}.\n"
     "3. {dx}: stable, home {med} continued.\n4. FEN: {lab:K}, {lab:Mg}, repleted.",
     "COURSE: Pacemaker interrogated (device SN {device_id}); no events. {dx} improved on {abx}. Prescriptions signed by {doc_name:attending}, MD (DEA {lic}).",
     "COURSE: Uncomplicated. {dx} improved on {abx}. Seen by {doc:consult} of {consult}. Swan-Ganz removed {date:disch:short}. Foley removed, voiding."),
    ("HOSP COURSE: adm to {service} ({doc:attending}). {dx} tx w/ {abx}, improved. {proc} {date:surg:short}, no comp. {labs}.",
     "course:\n#{dx} - {dose}, {labs}\n#{dx} - {consult} ({doc:consult}) following\n#FEN - {lab:K} repleted"),
)

DISCHARGE_END: T = (
    ("DISCHARGE MEDICATIONS: {meds}.", "DISCHARGE CONDITION: Stable. {vitals}.",
     "DISPOSITION: {dispo}.", "FOLLOW UP: {doc:pcp} on {date:fu:any}, phone {phone:clinic}. {doc:consult} ({consult}) in {n:1-6} weeks.",
     "Code status: Full. Contact: {rel:hcp} {phone:rel}.",
     "Dictated by: {doc_name:resident}, MD for {doc_name:attending}, MD   D: {date:disch:short}  T: {date:disch:short}  Job #{idnum}",
     "cc: {doc:pcp}, {osh}, fax {fax:osh}"),
    ("d/c meds: {meds}.", "dispo: {dispo}.", "f/u pcp {doc:pcp} {date:fu:short} ({phone:clinic}).",
     "contact {relword:hcp} {relname:hcp} {phone:rel}.", "{sig:md}"),
)

DISPO: tuple[str, ...] = (
    "home with services from {agency}", "{rehab} for short term rehab", "home with {relword:spouse}",
    "extended care facility ({rehab})", "home with VNA ({agency}); {relword:child} {relname:child} to assist",
    "transfer back to {osh}", "hospice at home through {agency}",
)

# ------------------------------------------------------------------ clinic letter

LETTER_HEAD: tuple[str, ...] = (
    "{hosp}\nDepartment of {spec}\n{hosp_street}\n{hosp_city}, {hosp_state} {hosp_zip}\nTel {phone:hosp}  Fax {fax:hosp}\n{url}",
    "{hosp} - {spec} Associates\n{hosp_street}, {hosp_city}, {hosp_state} {hosp_zip}\nPhone: {phone:hosp}",
    "{spec} Clinic, {hosp}\n{hosp_street} | {hosp_city} {hosp_state} {hosp_zip} | Fax {fax:hosp}",
)

LETTER_BODY: tuple[str, ...] = (
    "{date:note:full}\n\n{doc_name:pcp}, MD\n{osh_street}\n{osh_city}, {osh_state} {osh_zip}\n\nRE: {pt_formal}\nDOB: {date:dob:full}\nMRN: {mrn}\n\nDear Dr. {doc_last:pcp},",
    "{date:note:full}\n\nDear Dr. {doc_last:pcp}:\n\nRe: {pt_formal}, DOB {date:dob:full}",
    "{date:note:any}\nTo: {doc:pcp}\nFrom: {doc:consult}\nRe: {pt_full} (MR# {mrn})\n\nDear {doc_first:pcp},",
)

LETTER_PARAS: tuple[str, ...] = (
    "Thank you for referring {pt_title}, a {age}-year-old {prof}, whom I saw in {spec} clinic today for evaluation of {dx}.",
    "As you know, {pron_lower} is a {age} year old {sexword} with {pmh}. {pronoun} was hospitalized at {hosp_any} from {date:admit:short} to {date:disch:any} with {dx}.",
    "Since {pron_poss} last visit on {date:prior:any}, {pron_lower} reports {n:2-5} episodes of {dx}. Current medications include {meds}.",
    "On examination today {vitals}. {sign} was [negative|positive]. Lungs clear, heart {decoy}.",
    "Laboratory studies from {date:prior:short}: {labs}. Echo showed EF {n:20-65}%.",
    "The hemoglobin A1c is {n:6-11}.{n:0-9}%, LDL {n:60-190}, creatinine {n:0-3}.{n:0-9}, and TSH {n:0-6}.{n:0-9}. {labs}.",
    "Blood pressure today {bp_only} sitting and {bp_only} standing, pulse {n:55-100}, weight {n:110-260} pounds (previously {n:110-260}), BMI {n:19-45}.",
    "{pronoun} lives in {city}, {state} with {pron_poss} {relword:spouse} and continues to work for {org}.",
    "{pronoun} was accompanied today by {pron_poss} {relword:child}, {relname:child}, who helps with medications.",
    "In summary, I think {pron_poss} {dx} is stable. I have started {dose} and we will arrange {proc}. I would like to see {pron_obj} again on {date:fu:any}.",
    "We will review the results together at {pron_poss} visit on the {date_ord:fu}.",
    "Please do not hesitate to contact me at {phone:hosp} or {email:doc} with any questions.",
    "{pronoun} originally emigrated from {country} in {date:past:yyyy} and speaks {lang}; an interpreter was present.",
)

LETTER_CLOSE: tuple[str, ...] = (
    "Sincerely,\n\n{doc_name:consult}, MD\n{spec}\n{hosp}",
    "With best regards,\n{doc_name:consult}, M.D.\ncc: {pt_full}, {street}, {city}, {state} {zip}",
    "Yours sincerely,\n\n\n{doc_name:consult}, MD, PhD\nDictated but not read. {date:note:short}",
)

# ------------------------------------------------------------------ radiology

RADIOLOGY_HEAD: tuple[str, ...] = (
    "EXAM: {rad_exam}\nDATE: {date:note:full} {time}\nACCESSION #: {idnum}\nPATIENT: {pt_formal}  MRN: {mrn}\nORDERING: {doc_name:resident}, MD",
    "{rad_exam}   {date:note:any}\nAccession {idnum}   MR# {mrn}\nReferring physician: Dr. {doc_last:attending}",
    "{hosp_abbr} RADIOLOGY\n{rad_exam} -- {date:note:full}\nPt: {pt_formal}, {age}{sexletter}",
)

RADIOLOGY_BODY: tuple[str, ...] = (
    "CLINICAL HISTORY: {age} year old {sexword} with {dx}, {dx}. [Evaluate for {dx}.|R/O pneumonia.|Line placement.]",
    "COMPARISON: [{date:prior:full}[ from {osh}|].|{date:prior:short}.|None.]",
    "TECHNIQUE: [Portable AP upright chest.|Axial images through the chest without IV contrast.|Contiguous axial images of the head without contrast.|PA and lateral views.|Multiplanar images after {n:80-120}cc Omnipaque 350.]",
    "FINDINGS: {rad_finding} {rad_finding} {rad_finding}",
    "IMPRESSION:\n1. {rad_finding}\n2. {rad_finding}",
    "Findings discussed with {doc:resident} by telephone at {time} on {date:note:short}.",
    "{rad_finding} Recommend follow-up CT in {n:3-12} months.",
)

RAD_EXAMS: tuple[str, ...] = (
    "CHEST (PORTABLE AP)", "CT HEAD W/O CONTRAST", "CT CHEST W/CONTRAST", "CT ABD/PELVIS W/ CONTRAST",
    "MRI BRAIN W/WO GADOLINIUM", "RUQ ULTRASOUND", "BILAT LE DOPPLER", "CTA CHEST (PE PROTOCOL)",
    "KUB", "L HIP 2 VIEWS", "ECHO (TTE)", "CXR PA/LAT", "Renal ultrasound", "MR L-spine",
)

RAD_FINDINGS: tuple[str, ...] = (
    "The endotracheal tube terminates {n:2-6} cm above the carina.", "Right IJ central line tip in the distal SVC.",
    "Swan-Ganz catheter tip in the right pulmonary artery.", "NG tube courses below the diaphragm.",
    "Mild cardiomegaly, unchanged.", "Bibasilar atelectasis.", "Small bilateral pleural effusions.",
    "Patchy RLL opacity concerning for pneumonia.", "No pneumothorax.", "No acute intracranial hemorrhage.",
    "Chronic small vessel ischemic changes.", "Gallbladder wall thickening with pericholecystic fluid; positive sonographic Murphy's sign.",
    "Occlusive thrombus in the left popliteal vein.", "{n:4-14} mm nodule in the RUL.", "Filling defects in the segmental arteries of the LLL.",
    "Degenerative changes at L4-L5 and L5-S1.", "Moderate pulmonary edema.", "Sternotomy wires intact.",
    "Left ventricular ejection fraction estimated at {n:20-65}%.", "Mild hydronephrosis on the right.",
    "Free air under the diaphragm is not seen.", "Dobhoff tube tip in the stomach.",
    "A {n:1-9}.{n:0-9} x {n:1-6}.{n:0-9} cm hypodense lesion in hepatic segment {n:2-8} (series {n:2-6}, image {n:10-140}).",
    "The infrarenal aorta measures {n:2-5}.{n:0-9} cm in diameter.", "Moderate right effusion, approximately {n:150-900} mL.",
    "Right kidney {n:9-12}.{n:0-9} cm, left kidney {n:9-12}.{n:0-9} cm, without hydronephrosis.",
    "CBD measures {n:3-12} mm.", "Hyperdense focus measuring {n:3-25} mm with attenuation of {n:40-70} HU.",
    "Compression deformity of T{n:6-12}, approximately {n:10-40}% height loss.",
    "Spleen {n:9-18} cm.", "Largest node {n:6-22} mm short axis (series {n:2-5}, image {n:20-90}).",
)

# ------------------------------------------------------------------ phone call

PHONE_HEAD: T = (
    ("Telephone Encounter {date:note:any} {time}", "Phone note - {spec}", "TELEPHONE CALL", "Phone call with family, {date:note:short}"),
    ("phone note {date:note:short} {time}", "tc {time}", "telephone enc", "call rec'd {time}"),
)

PHONE_BODY: T = (
    ("Received a call from {rel:hcp} regarding {pt_title}. {pronoun} reports {dx} for {n:2-5} days.",
     "Spoke with the patient at {phone:pt}; identity confirmed with date of birth {date:dob:full}.",
     "{relname:child} ({relword:child}) called requesting a refill of {dose}; sent to pharmacy.",
     "Called back at {phone:rel}, left a message to return the call at {phone:clinic}.",
     "Patient asks whether {pron_lower} can take {med} with {med}; advised to continue {dose}.",
     "{relword:spouse} {relname:spouse} reports {pron_lower} fell at home on {date:past:short}, no head strike.",
     "Results of {rad_exam_lower} from {date:prior:short} reviewed with patient: {rad_finding}",
     "Lab results faxed to {osh} at {fax:osh}.", "{pronoun} fell while walking at {locother} last week.", "Pt can be reached at {phone:pt} or by email at {email:pt}.",
     "Discussed with {doc:attending}, who recommends follow up in clinic on {date:fu:any}.",
     "Insurance: Medicare ID {hp}; prior authorization pending.", "Verified SSN {ssn} for the disability form.",
     "Appointment rescheduled to {date:fu:full} at {time}.", "Will see {pron_obj} in clinic on the {date_ord:fu}.", "Portal message sent via {url}.",
     "Reports increased swelling in both legs, weight up {n:2-6} lbs since {date:past:short}; advised to take an extra dose of Lasix 40mg and call back tomorrow.",
     "{pronoun} denies fever, chills, chest pain; tolerating {med} without side effects.",
     "Pharmacy called to clarify {dose}; order corrected.",
     "Home INR today {n:1-4}.{n:0-9}; Coumadin dose adjusted, recheck in one week.",
     "VNA nurse from {agency} called with BP {bp_only} and FS {n:80-300}.",
     "Home readings: BP {bp_only}, HR {n:55-110}, weight {n:110-260} lbs, FS {n:80-280}.",
     "Taking {dose}, {dose} and {dose}; last dose at {time}.", "Temp {n:98-102}.{n:0-9} at home, {n:2-3} episodes of vomiting in {n:12-48} hours."),
    ("{relword:hcp} {relname:hcp} called re: {dx} x{n:2-5}d.", "spoke w/ pt @ {phone:pt}, dob {date:dob:full} verified.",
     "{relword:child} {relname:child} req refill {dose}, sent.", "lm @ {phone:rel} to call back {phone:clinic}.",
     "pt asking re {med} w/ {med}, advised cont {dose}.", "fall at home {date:past:short} per {relword:spouse}, no head strike.",
     "labs faxed to {osh} {fax:osh}.", "d/w {doc:attending}, f/u clinic {date:fu:short}.",
     "appt moved to {date:fu:short} @ {time}.", "pt # {phone:pt}, email {email:pt}.",
     "LE swelling, wt up {n:2-6}lb since {date:past:short}. extra lasix 40 today, call back in am.",
     "denies f/c/cp, tol {med}.",
     "pharmacy called to clarify {dose}, corrected.",
     "inr {n:1-4}.{n:0-9}, coumadin adjusted, recheck 1 wk.",
     "vna ({agency}) called: bp {bp_only}, fs {n:80-300}.",
     "home bp {bp_only}, hr {n:55-110}, wt {n:110-260}lb, fs {n:80-280}.", "taking {dose}, {dose}; last dose {time}.",
     "temp {n:98-102}.{n:0-9} at home, vomiting x{n:2-3}."),
)

PHONE_SIGN: T = (
    ("{sig:rn}", "{sig:np}", "{sig:md}"),
    ("{sig:rn}", "{sig:np}", "-{rn}"),
)

# ------------------------------------------------------------------ shared extras

EXTRAS: T = (
    ("Patient was involved in a motor vehicle accident; vehicle license plate {vehicle} recorded by police.",
     "Pacemaker interrogated, device serial number {device_id}, functioning normally.",
     "Patient's employer, {org}, called for a work note.",
     "Pt found down at {locother} by a passerby, brought in by EMS.",
     "Insurance on file: member ID {hp}.", "Prescription for {dose} written, DEA {lic}.",
     "Specimen {idnum} sent to pathology.", "Patient's SSN on file: {ssn}.",
     "Home address: {street}, {city}, {state} {zip}.", "Username for the patient portal is {user}; instructions at {url}.",
     "Patient originally from {country}, moved to {city} in {date:past:yyyy}.",
     "{pt_first} works as a {prof} at {org}.", "Account # {acct}.", "Previously followed at {osh} in {city}."),
    ("mva, plate {vehicle}.", "ppm interrogated, sn {device_id}, wnl.", "employer ({org}) called for work note.",
     "found down at {locother}, bib ems.", "ins id {hp}.", "rx {dose}, dea {lic}.", "spec {idnum} to path.",
     "ssn {ssn}.", "addr {street}, {city} {state_abbr} {zip}.", "portal user {user}.",
     "from {country}, here since {date:past:yyyy}.", "works as {prof} at {org}.", "acct {acct}.",
     "prev followed at {osh}."),
)

# ------------------------------------------------------------------ longer context blocks

ENDO: T = (
    ("Fingersticks {n:90-260}-{n:140-320}, covered per insulin sliding scale.", "On insulin drip per protocol, glucose {n:110-180} range.",
     "Lantus 18 units given at {time}; fingerstick {n:70-200} before breakfast.", "Steroids tapering per endocrine; cortisol level pending."),
    ("fs {n:90-260}-{n:140-320}, ssi coverage.", "insulin gtt per protocol, bs {n:110-180}.", "lantus 18u @ {time}.",
     "fs q6h, {n:2-8}u humalog x{n:1-3}."),
)

HEME: T = (
    ("{lab:Hct}, {lab:plt}; no signs of active bleeding.", "Subcutaneous heparin for DVT prophylaxis; pneumoboots on.",
     "{lab:INR}, Coumadin held tonight per team.", "Type and screen sent at {time}; 2 units on hold in the blood bank."),
    ("{lab:Hct}, {lab:plt}, no s/s bleeding.", "sq hep/pneumoboots.", "{lab:INR}, coumadin held.", "t&s sent {time}, 2u on hold."),
)

ACCESS: T = (
    ("Lines: {device} and {device}, dressings dry and intact.", "Peripheral IV x2, #{n:18-22}g in the L forearm, patent.",
     "R IJ triple lumen day {n:2-9}, site clean.", "PICC placed by IV team, tip confirmed on CXR."),
    ("lines: {device}, {device}, drsg d/i.", "piv x2 #{n:18-22}g, patent.", "r ij tlc day {n:2-9}, site ok.", "picc placed, tip ok per cxr."),
)

ACTIVITY: T = (
    ("Out of bed to chair with assist of two for {n:1-3} hours.", "Ambulated in hallway with PT and a walker, steady gait.",
     "Bedrest per orthopedics; log roll with turns.", "Dangled at the bedside, became lightheaded, returned to bed."),
    ("oob to chair w/ assist x2, {n:1-3}hrs.", "amb in hall w/ pt + walker.", "bedrest, log roll.", "dangled, lightheaded, back to bed."),
)

EXAM: T = (
    ("Exam: Gen: [NAD|elderly, chronically ill appearing|intubated, sedated]. HEENT: [MMM|dry mucous membranes], [anicteric|scleral icterus]. "
     "Neck: [JVP {n:6-14} cm|no JVD]. CV: [RRR|irregularly irregular], {decoy}. Lungs: [CTAB|crackles at the bases|scattered wheezes]. "
     "Abd: [soft, NT/ND, +BS|distended, mildly tender in the RUQ]. Ext: [{n:1-3}+ edema to the knees|no edema], {decoy}. Neuro: [nonfocal|A&O x{n:1-3}], {sign} [negative|positive].",
     "PHYSICAL EXAMINATION: General: alert, in no acute distress. Cardiac: regular rate and rhythm, {decoy}. Lungs: [clear to auscultation|decreased breath sounds at the right base]. "
     "Abdomen: [soft and non-tender|obese, soft]. Extremities: [warm, well perfused|cool with mottling]. {sign} [absent|present]."),
    ("PE: gen nad. cv rrr, {decoy}. lungs [cta b|crackles bases|coarse]. abd soft nt/nd +bs. ext [{n:1-3}+ edema|no edema]. neuro [nonfocal|a&ox{n:1-3}].",
     "exam: [nad|sedated]. rrr. [ctab|dim bases]. abd benign. {decoy}. {sign} neg."),
)

ROS: T = (
    ("ROS: Negative for fevers, chills, night sweats. Positive for [fatigue|dyspnea on exertion|orthopnea|poor appetite].",
     "Review of systems otherwise negative in detail except as noted above."),
    ("ros neg except [fatigue|doe|orthopnea|poor po].", "ROS otherwise neg."),
)

PROBLEMS: tuple[str, ...] = (
    "{dx}: continue {abx} day {n:2-10} of {n:7-14}; follow cultures and WBC.",
    "{dx}: {dose}; goal {lab:K}, {lab:Mg}.", "{dx}: hold {med} given {lab:Cr}; renally dose meds.",
    "{dx}: rate controlled on {dose}; anticoagulation with Eliquis once stable.",
    "{dx}: diuresis with Lasix 40mg IV BID, goal net negative 1L; daily weights.",
    "{dx}: Swan-Ganz guided therapy, wean {drip}.", "{dx}: monitor on telemetry, repeat ECG in AM.",
    "{dx}: PT/OT evaluation; fall precautions.", "{dx}: continue home {med}.",
    "FEN: replete lytes, {feed} at goal; speech and swallow to reassess.",
    "PPx: heparin SC, PPI, bowel regimen.", "Access: {device}, day {n:2-8}.",
    "Code: full (confirmed with patient).", "Dispo: ICU for now, possible call-out tomorrow.",
)

ALLERGIES: tuple[str, ...] = (
    "ALLERGIES: NKDA.", "ALLERGIES: Penicillin (rash), sulfa (hives).", "Allergies: codeine - nausea; latex.",
    "ALLERGIES: No known drug allergies.", "Allergies: iodinated contrast (anaphylaxis), premedicate with prednisone and Benadryl.",
)

DISCHARGE_INSTRUCTIONS: tuple[str, ...] = (
    "DISCHARGE INSTRUCTIONS: Please call your doctor or return to the Emergency Department for fever greater than 101.5, "
    "chest pain, shortness of breath, or bleeding. Weigh yourself every morning and call if your weight increases more than 3 lbs. "
    "Continue a 2 gram sodium diet and 1.5 liter fluid restriction.",
    "INSTRUCTIONS: Take all medications as prescribed. Do not drive while taking oxycodone. Keep the incision clean and dry; "
    "you may shower in 48 hours. No lifting more than 10 lbs for 6 weeks.",
    "Patient instructed to check fingersticks before meals and at bedtime and to keep a log for the diabetes clinic. "
    "Hold metformin for 48 hours after contrast.",
    "Diet: cardiac/diabetic. Activity: as tolerated with walker. Wound care: dry sterile dressing daily. Foley removed prior to discharge.",
)

PERTINENT: tuple[str, ...] = (
    "PERTINENT RESULTS: Admission labs: {labs}. Discharge labs: {labs}.",
    "LABS ON ADMISSION: {labs}; {labs}. {abg}. Urinalysis with {n:10-50} WBC, moderate bacteria.",
    "STUDIES: Echo: EF {n:20-65}%, {decoy}. CXR: {rad_finding} CT: {rad_finding}",
    "MICRO: blood cultures {n:1-4}/4 bottles with GNRs, sensitive to ceftriaxone. Urine culture > 100,000 E. coli.",
)
